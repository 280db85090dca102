/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// fetch.go: Pool.Fetch, source.Fetch run in a worker process, and the
// worker's side of it.

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
)

// ErrUnchanged: the ref still resolves to the revision whose fetch was to
// be skipped (Fetch's skip); nothing was downloaded.
var ErrUnchanged = errors.New("the ref still resolves to the revision not to fetch again")

// fetchGrace is how long past a fetch's own timeout the parent waits
// before it kills the worker: the fetch's own deadline names what it was
// doing, the kill does not.
const fetchGrace = 5 * time.Second

// Fetch runs source.Fetch in a worker process, in tenant's place; o.Auth
// is ignored: the worker makes its own from secret, the data of the
// Secret (nil without one), named secretName in messages. When the ref
// resolves to skip (a revision whose worker died before), nothing is
// downloaded and Fetch returns that revision with ErrUnchanged. A worker
// that dies returns a *DiedError naming the revision it resolved, if it
// got that far; one killed at its deadline (a slow network, a busy node)
// is a retryable timeout, never a *DiedError. Waiting for a slot is
// bounded by the fetch's timeout, and the fetch has its whole timeout from
// when it got one.
func (p *Pool) Fetch(ctx context.Context, tenant string, o source.Options, secret map[string][]byte, secretName, skip string) (source.Result, error) {
	fr := &fetchRequest{Secret: secret, SecretName: secretName, Skip: skip}
	ans, err := p.runFetch(ctx, tenant, o, fr)
	switch {
	case err != nil:
		return source.Result{}, err
	case ans.Skipped:
		return source.Result{Revision: ans.resolved}, ErrUnchanged
	case ans.Error != nil:
		return source.Result{}, fetchFromWire(ans.Error)
	case ans.Fetched == nil:
		return source.Result{}, errorf("its answer holds no fetch")
	}
	return *ans.Fetched, nil
}

// List runs source.List in a worker process, in tenant's place, as Fetch
// runs source.Fetch: for a remote whose answer the controller cannot
// bound (SSH), under the worker's limits. It returns ref name → commit.
func (p *Pool) List(ctx context.Context, tenant string, o source.Options, secret map[string][]byte, secretName string) (map[string]string, error) {
	p.lists.Add(1)
	ans, err := p.runFetch(ctx, tenant, o, &fetchRequest{Secret: secret, SecretName: secretName, ListOnly: true})
	switch {
	case err != nil:
		return nil, err
	case ans.Error != nil:
		return nil, fetchFromWire(ans.Error)
	}
	return ans.Refs, nil
}

// runFetch runs fr, completed from o, in a worker of tenant: a slot
// within o's timeout, the worker killed at the timeout plus fetchGrace.
// Its errors are the worker's, as source errors.
func (p *Pool) runFetch(ctx context.Context, tenant string, o source.Options, fr *fetchRequest) (answer, error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = v1alpha1.DefaultTimeout
	}
	release, err := p.slot(ctx, tenant, timeout)
	if err != nil {
		return answer{}, source.NewError(source.ReasonTimeout, "fetching "+source.SafeURL(o.URL)+": no free worker within the fetch's timeout of "+timeout.String()+" (fetches and builds run a few at a time, one per namespace); a later attempt may succeed", nil)
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, timeout+fetchGrace)
	defer cancel()
	fr.URL, fr.Ref, fr.Timeout, fr.Limits = o.URL, o.Ref, timeout, o.Limits
	fr.AllowFileURLs, fr.AllowInsecureHTTP, fr.Dir = o.AllowFileURLs, o.AllowInsecureHTTP, o.Dir
	fr.LastRevision, fr.Target = o.LastRevision, o.Target
	req := p.request(request{Fetch: fr})
	if req.MaxFileSize = o.Limits.LargestFile(); req.MaxFileSize == 0 {
		req.MaxFileSize = -1
	}
	p.fetches.Add(1)
	ans, err := p.run(ctx, tenant, req, timeout+fetchGrace)
	err = p.strike(strings.Join([]string{"fetch", tenant, o.URL, o.Dir}, "\x00"), err)
	if err == nil {
		return ans, nil
	}
	var died *DiedError
	var le *render.LimitError
	if errors.As(err, &le) && le.Limit == render.LimitTime {
		return ans, source.NewError(source.ReasonTimeout, fmt.Sprintf("fetching %s: not done within spec.timeout (%s) and %s more, its worker was stopped; a later attempt may succeed",
			source.SafeURL(o.URL), timeout, fetchGrace), nil)
	}
	if errors.As(err, &died) {
		died.Revision = ans.resolved
		what := err.Error()
		if errors.As(err, &le) {
			what = le.What()
		}
		return ans, source.NewError(source.ReasonLimitExceeded, "fetching "+source.SafeURL(o.URL)+": "+what, died)
	}
	return ans, fmt.Errorf("fetching %s: %w", source.SafeURL(o.URL), err)
}

// fetch is the worker's side: source.Fetch, telling the revision as soon
// as the ref is resolved.
func fetch(req fetchRequest, out *json.Encoder) response {
	var auth *source.Auth
	if req.Secret != nil {
		a, err := source.AuthFromSecret(req.Secret, req.URL)
		if err != nil {
			return response{Error: toWire(err)}
		}
		a.SecretName = req.SecretName
		auth = a
	}
	skipped := false
	o := source.Options{URL: req.URL, Ref: req.Ref, Auth: auth, Timeout: req.Timeout, Limits: req.Limits,
		AllowFileURLs: req.AllowFileURLs, AllowInsecureHTTP: req.AllowInsecureHTTP, Dir: req.Dir,
		LastRevision: req.LastRevision, Target: req.Target,
		Resolved: func(rev string) error {
			if err := out.Encode(frame{Resolved: rev}); err != nil {
				return err
			}
			if req.Skip != "" && rev == req.Skip {
				skipped = true
				return ErrUnchanged
			}
			return nil
		}}
	if req.ListOnly {
		return list(o)
	}
	res, err := source.Fetch(context.Background(), o)
	switch {
	case skipped:
		return response{Skipped: true}
	case err != nil:
		return response{Error: toWire(err)}
	}
	return response{Fetched: &res}
}

// list is the worker's side of a ListOnly request.
func list(o source.Options) response {
	refs, err := source.List(context.Background(), o)
	if err != nil {
		return response{Error: toWire(err)}
	}
	return response{Refs: source.RefNames(refs)}
}
