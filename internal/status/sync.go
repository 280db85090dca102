/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// sync.go: Sync, which lists a commit's statuses and posts only the desired
// ones that differ, and UnconfirmedError for a post whose answer was lost.

package status

import (
	"context"
	"fmt"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Desired is a status that should be on the commit of Revision.
type Desired struct {
	// Revision is <ref>@sha1:<hex>, as stamped on the object.
	Revision string
	Status   Entry
}

// Sync makes the latest status of each desired context on its commit equal
// to the desired one: it lists the commit's statuses first and posts only
// what differs in state or description, so it never posts a duplicate
// (GitHub keeps at most 1,000 statuses per context and commit). It returns
// the records the forge now has, in the order of desired; on error it
// returns those acknowledged so far with the error, and the caller stores
// them and retries the rest later (after RetryAfter when rate limited).
func Sync(ctx context.Context, p Provider, desired []Desired) ([]v1alpha1.CommitStatusRecord, error) {
	forge := forgeOf(p)
	current := map[string][]Entry{} // sha → statuses, listed once per commit
	var acked []v1alpha1.CommitStatusRecord
	for _, d := range desired {
		_, sha, err := v1alpha1.ParseRevision(d.Revision)
		if err != nil {
			return acked, err
		}
		want := d.Status
		if forge != "" {
			want.Description = Truncate(want.Description, forge)
		}
		rec := v1alpha1.CommitStatusRecord{Context: want.Context,
			Revision: d.Revision, State: string(want.State), Description: want.Description}
		maybePosted, err := ensure(ctx, p, sha, want, current)
		if err != nil {
			err = fmt.Errorf("status %s on %s: %w", want.Context, v1alpha1.ShortSHA(sha), err)
			if maybePosted {
				rec.Unconfirmed = true
				return acked, &UnconfirmedError{Record: rec, Err: err}
			}
			return acked, err
		}
		acked = append(acked, rec)
	}
	return acked, nil
}

// UnconfirmedError: posting Record failed, and the forge may have stored
// it all the same (the answer was lost). The caller records it as
// unconfirmed; the next Sync lists the commit's statuses before posting
// it again.
type UnconfirmedError struct {
	Record v1alpha1.CommitStatusRecord
	Err    error
}

func (e *UnconfirmedError) Error() string { return e.Err.Error() }
func (e *UnconfirmedError) Unwrap() error { return e.Err }

// ensure posts want unless it is already the commit's status for its
// context; maybePosted says the error came from the post itself, which the
// forge may have stored.
func ensure(ctx context.Context, p Provider, sha string, want Entry, current map[string][]Entry) (maybePosted bool, err error) {
	list, listed := current[sha]
	if !listed {
		if list, err = p.List(ctx, sha); err != nil {
			return false, err
		}
	}
	if present(list, want) {
		current[sha] = list
		return false, nil
	}
	if err := p.Post(ctx, sha, want); err != nil {
		return !rejected(err), err
	}
	current[sha] = replace(list, want)
	return false, nil
}

func present(list []Entry, want Entry) bool {
	for _, s := range list {
		if s.Context == want.Context {
			// A success is final: one already there, whatever it says
			// (a controller that lost its records words it anew), is not
			// posted again, and on a rollout context nothing replaces it.
			if s.State == StateSuccess && (want.State == StateSuccess || isRolloutContext(want.Context)) {
				return true
			}
			return s.State == want.State && s.Description == want.Description
		}
	}
	return false
}

// replace records want as the newest status of its context.
func replace(list []Entry, want Entry) []Entry {
	out := []Entry{want}
	for _, s := range list {
		if s.Context != want.Context {
			out = append(out, s)
		}
	}
	return out
}
