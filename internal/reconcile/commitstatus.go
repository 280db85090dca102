/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// commitstatus.go: CommitStatusReporter, which posts the sync and rollout
// commit statuses an object's status calls for and the forge has not
// acknowledged yet, through the forge of a verified source.

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/status"
)

// forgeRetry is how soon a rollout status the forge did not take is tried
// again (a rate limit says its own time).
const forgeRetry = 10 * time.Second

// forgeTimeout bounds one round of commit-status calls, so that a slow
// forge never holds a reconcile worker for long.
const forgeTimeout = 10 * time.Second

// CommitStatusReporter posts the commit statuses that an object's status
// calls for and that the forge has not acknowledged yet. It is
// level-triggered: what should exist is derived from status, what was
// acknowledged is recorded in status.commitStatuses, so a restart or an
// outage leads to the missing status being posted later, once.
//
// Credentials: a status is posted with the forge token of the
// GitRepository that produced the object, read in that GitRepository's
// namespace, and only to an https:// address (http:// with
// AllowInsecureHTTP). Descriptions and errors are scrubbed of secret
// values (see secrets).
type CommitStatusReporter struct {
	// Redact records the Secret values this reconciler learns and scrubs
	// them from every message it publishes (conditions, events, logs,
	// commit statuses); one registry per controller (see package redact).
	Redact *redact.Registry
	// Applying is the sets the GitRepository reconciler of this process
	// applied (shared with it): the commit status of an object of another
	// namespace is trusted while its inventory cannot list it yet.
	Applying *Applying
	Client   client.Client
	// APIReader reads a GitRepository the cache does not hold (see
	// sourceRepository); none when nil.
	APIReader client.Reader
	HTTP      *http.Client
	Now       func() time.Time
	// AllowInsecureHTTP accepts http:// forge addresses (the token then
	// travels in clear text): --allow-insecure-http, for local setups.
	AllowInsecureHTTP bool
	// Fence, when set, may refuse right before anything is posted (see
	// Options.Fence); the status is then left to the replica that leads.
	// The posts end before the time it returns.
	Fence func(context.Context) (time.Time, error)
	// Budget bounds the time each namespace's forges may take (see
	// forgeBudget); nil: no bound.
	Budget *forgeBudget

	mu      sync.Mutex
	blocked map[string]time.Time // forge repository → rate limited until
}

// ReportSync posts the sync status of gr and records the outcome in its
// status (records and the CommitStatusFailed condition). gr may come from
// the cache: before anything is posted it is checked against the API
// server, and errStaleRead is returned, with nothing posted, when the
// cache is behind (its records could be missing a status already posted).
// save, when set, writes gr's status; it is called before a pending
// status is posted for a revision no record shows pending (see intents).
func (c *CommitStatusReporter) ReportSync(ctx context.Context, gr *v1alpha1.GitRepository, save func(context.Context) error) error {
	if gr.Spec.CommitStatus == nil {
		clearCondition(&gr.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
		return nil
	}
	scrub := c.Redact.ForSource(client.ObjectKeyFromObject(gr))
	guard := func(ctx context.Context) error {
		ok, err := fresh(ctx, c.APIReader, gr)
		switch {
		case err != nil:
			return &guardError{fmt.Errorf("read GitRepository %s/%s: %w", gr.Namespace, gr.Name, err)}
		case !ok:
			return &guardError{errStaleRead}
		}
		return nil
	}
	err := c.report(ctx, gr, status.SyncDesired(gr), &gr.Status.CommitStatuses, scrub, guard, save)
	var ge *guardError
	var fe *fenceError
	switch {
	case errors.As(err, &ge):
		return ge.err
	case errors.As(err, &fe):
		// The status write and the apply go on; the next reconcile posts.
		logf.FromContext(ctx).V(1).Info("commit status not posted", "reason", fe.err.Error())
		return nil
	}
	setForgeCondition(&gr.Status.Conditions, gr.Generation, c.now(), err)
	return nil
}

// ReportRollout posts the rollout status of p through the forge of the
// GitRepository that applied it. It returns how soon to retry (0: no need).
// save, when set, writes p's status, as ReportSync's does.
func (c *CommitStatusReporter) ReportRollout(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, save func(context.Context) error) time.Duration {
	gr, retry, err := c.sourceOf(ctx, p)
	if err != nil {
		setCondition(&p.Status.Conditions, p.Generation, c.now(), v1alpha1.CommitStatusFailedCondition, metav1.ConditionTrue,
			"SourceNotVerified", err.Error())
		return 0
	}
	if gr == nil || gr.Spec.CommitStatus == nil {
		// The forge is unknown until the GitRepository can be read (or
		// shows that it applied p): the rollout status is posted on a
		// later try, not dropped.
		return retry
	}
	scrub := c.Redact.ForSource(client.ObjectKeyFromObject(gr)).And(c.Redact.ForNamespace(p.Namespace))
	err = c.report(ctx, gr, status.RolloutDesired(p), &p.Status.CommitStatuses, scrub, nil, save)
	var fe *fenceError
	var ge *guardError
	switch {
	case errors.As(err, &fe):
		// Not the forge's doing: no condition, and another try soon.
		logf.FromContext(ctx).V(1).Info("commit status not posted", "reason", fe.err.Error())
		return forgeRetry
	case errors.As(err, &ge):
		// The status write before the post failed; the reconcile's own
		// write fails the same way and runs it again.
		logf.FromContext(ctx).V(1).Info("commit status not posted", "reason", ge.err.Error())
		return forgeRetry
	}
	setForgeCondition(&p.Status.Conditions, p.Generation, c.now(), err)
	if err == nil {
		return 0
	}
	var rl *status.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter
	}
	return forgeRetry
}

// errSourceNotVerified: the object names, in its bggitops.dev/source
// annotation, a GitRepository of another namespace that has not applied
// it. Anyone who may create the object can write that annotation; the
// forge token of another namespace is not theirs to use.
var errSourceNotVerified = errors.New("has not applied this object: no commit status is posted with its credentials")

// sourceOf is the GitRepository whose forge and token report p's rollout,
// or nil with how soon to look again. The annotation that names it is
// trusted within a namespace (whoever may create p there could create a
// GitRepository there too); across namespaces only when that
// GitRepository's inventory lists p, i.e. it applied p itself, or while it
// is applying p's revision (its inventory cannot list p yet). A GitRepository of another namespace that does
// not exist is reported as one that did not apply p: p's readers learn
// nothing about other namespaces.
func (c *CommitStatusReporter) sourceOf(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment) (*v1alpha1.GitRepository, time.Duration, error) {
	gr, err := sourceRepository(ctx, c.Client, c.APIReader, p)
	if err != nil {
		return nil, forgeRetry, nil
	}
	src, ok := v1alpha1.AppliedBy(p)
	switch {
	case !ok, src.Namespace == p.Namespace:
		return gr, 0, nil
	case gr != nil && inInventory(gr, p):
		return gr, 0, nil
	}
	rev := p.Annotations[v1alpha1.RevisionAnnotation]
	if gr != nil && rev != "" && c.Applying.has(src.String(), rev, fbgdID(p)) {
		// The GitRepository applied p at p's revision and writes its
		// inventory only when its reconcile ends: the first decisions of
		// a new object (a first deployment's pending) fall in between and
		// are posted, or a fast rollout would show only its verdict.
		return gr, 0, nil
	}
	return nil, 0, fmt.Errorf("GitRepository %s %w", src, errSourceNotVerified)
}

// fbgdID is p's inventory entry ID.
func fbgdID(p *v1alpha1.FlinkBlueGreenDeployment) string {
	return objectID(p.Namespace, p.Name, schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: v1alpha1.FlinkBlueGreenDeploymentKind})
}

// inInventory reports whether gr's inventory lists p.
func inInventory(gr *v1alpha1.GitRepository, p *v1alpha1.FlinkBlueGreenDeployment) bool {
	if gr.Status.Inventory == nil {
		return false
	}
	id := fbgdID(p)
	for _, e := range gr.Status.Inventory.Entries {
		if e.ID == id {
			return true
		}
	}
	return false
}

func setForgeCondition(conds *[]metav1.Condition, gen int64, now time.Time, err error) {
	if err == nil {
		clearCondition(conds, v1alpha1.CommitStatusFailedCondition)
		return
	}
	setCondition(conds, gen, now, v1alpha1.CommitStatusFailedCondition, metav1.ConditionTrue, forgeReason(err), err.Error())
}

func forgeReason(err error) string {
	var rl *status.RateLimitedError
	switch {
	case errors.Is(err, status.ErrInsecureAddress):
		return "InsecureAddress"
	case errors.Is(err, status.ErrUnauthorized):
		return "Unauthorized"
	case errors.Is(err, status.ErrNotFound):
		return "RepositoryNotFound"
	case errors.As(err, &rl):
		return "RateLimited"
	}
	return "ForgeUnavailable"
}

// guardError is a refusal of report's guard: the reconcile's, not the
// forge's.
type guardError struct{ err error }

func (e *guardError) Error() string { return e.err.Error() }

// fenceError is a refusal of the fence: this replica may not post now
// (it does not lead, or the Lease could not be read). Nothing is posted
// and nothing else changes; another try follows.
type fenceError struct{ err error }

func (e *fenceError) Error() string { return e.err.Error() }

// report posts what desired holds and records do not. Descriptions and
// the error are scrubbed of secret values. guard, when set, may refuse
// (an error, returned as it is) before anything is posted. save, when
// set, stores the records of the pending statuses about to be posted
// first (intents): an error from it is returned, with nothing posted.
func (c *CommitStatusReporter) report(ctx context.Context, gr *v1alpha1.GitRepository, desired []status.Desired,
	records *[]v1alpha1.CommitStatusRecord, scrub redact.Scrubber, guard, save func(context.Context) error) error {
	for i := range desired {
		desired[i].Status.Description = scrub.Scrub(desired[i].Status.Description)
	}
	desired = append(desired, status.UnconfirmedVerdicts(*records, desired)...)
	missing := status.Unacknowledged(desired, *records, gr.Spec.CommitStatus.Provider)
	if len(missing) == 0 {
		return nil
	}
	if guard != nil {
		if err := guard(ctx); err != nil {
			return err
		}
	}
	key := gr.Spec.CommitStatus.Provider + "|" + gr.Spec.CommitStatus.Address + "|" + gr.Spec.CommitStatus.Repository
	start, deadline, err := c.callDeadline(ctx, gr.Namespace, key)
	if err != nil {
		return err
	}
	p, token, err := c.provider(ctx, gr)
	if err != nil {
		countCommitStatus(gr, err)
		return scrub.ScrubError(err)
	}
	scrub = scrub.And(redact.ForValue(token))
	if in := status.Intents(missing, *records); save != nil && len(in) > 0 {
		*records = status.MergeRecords(*records, in)
		if err := save(ctx); err != nil {
			return &guardError{err}
		}
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	acked, err := status.Sync(ctx, p, missing)
	c.Budget.spend(gr.Namespace, time.Now(), time.Since(start))
	countCommitStatus(gr, err)
	var uc *status.UnconfirmedError
	if errors.As(err, &uc) {
		acked = append(acked, uc.Record)
	}
	*records = status.MergeRecords(*records, acked)
	var rl *status.RateLimitedError
	if errors.As(err, &rl) {
		c.block(key, c.now().Add(rl.RetryAfter))
	}
	err = scrub.ScrubError(err)
	if err != nil {
		logf.FromContext(ctx).Info("commit status not posted", "repository", gr.Spec.CommitStatus.Repository, "error", err.Error())
	}
	return err
}

// callDeadline is when a forge call that starts now must end: within
// forgeTimeout, the leader's lease (Fence) and what is left of the
// namespace's forge budget, which is charged from start. A forge key
// (provider, address, repository) that asked to wait, or a namespace
// without budget left, is a RateLimitedError; a lost lease a fenceError.
func (c *CommitStatusReporter) callDeadline(ctx context.Context, ns, key string) (start, deadline time.Time, err error) {
	deadline = time.Now().Add(forgeTimeout) // the clock of contexts, not c.Now
	if c.Fence != nil {
		until, err := c.Fence(ctx)
		if err != nil {
			return start, deadline, &fenceError{err}
		}
		if until.Before(deadline) {
			deadline = until
		}
	}
	if until, ok := c.blockedUntil(key); ok {
		return start, deadline, &status.RateLimitedError{RetryAfter: until.Sub(c.now()), Message: "rate limited by the forge; waiting"}
	}
	// The deadline ends at start+left, so a forge that never answers
	// spends all that is left.
	start = time.Now()
	left, err := c.Budget.allow(ns, start)
	if err != nil {
		return start, deadline, err
	}
	if end := start.Add(left); end.Before(deadline) {
		deadline = end
	}
	return start, deadline, nil
}

// provider checks the address before it reads the token: a token is never
// read for an address it may not be sent to.
func (c *CommitStatusReporter) provider(ctx context.Context, gr *v1alpha1.GitRepository) (status.Provider, string, error) {
	token, err := c.token(ctx, gr)
	if err != nil {
		return nil, "", err
	}
	p, err := status.NewProvider(*gr.Spec.CommitStatus, token, status.Options{HTTP: c.HTTP, AllowInsecureHTTP: c.AllowInsecureHTTP})
	return p, token, err
}

// token is the forge token of gr's spec.commitStatus, read only once its
// address is checked.
func (c *CommitStatusReporter) token(ctx context.Context, gr *v1alpha1.GitRepository) (string, error) {
	if err := status.CheckAddress(gr.Spec.CommitStatus.Address, c.AllowInsecureHTTP); err != nil {
		return "", err
	}
	sec := &corev1.Secret{}
	key := types.NamespacedName{Namespace: gr.Namespace, Name: gr.Spec.CommitStatus.SecretRef.Name}
	if err := c.Client.Get(ctx, key, sec); err != nil {
		return "", fmt.Errorf("read commit status Secret %s: %w", key.Name, err)
	}
	c.Redact.NoteSecret(sec)
	token, err := source.SecretValue(sec, "token")
	if err != nil {
		return "", fmt.Errorf("commit status %w", err)
	}
	return string(token), nil
}

func (c *CommitStatusReporter) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *CommitStatusReporter) blockedUntil(key string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.blocked[key]
	return until, ok && c.now().Before(until)
}

func (c *CommitStatusReporter) block(key string, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocked == nil {
		c.blocked = map[string]time.Time{}
	}
	c.blocked[key] = until
}
