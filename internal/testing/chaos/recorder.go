/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// recorder.go: recorder, which polls the FlinkBlueGreenDeployments, logs
// every change and keeps the rollouts it saw (episode).

package chaos

import (
	"context"
	"strings"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// observation is what the recorder saw of a FlinkBlueGreenDeployment.
type observation struct {
	at                          time.Time
	state                       v1alpha1.BlueGreenState
	job                         v1alpha1.JobState
	active, activeRev, target   string
	reason, errMsg, revisionAnn string
}

func (o observation) sameAs(p observation) bool {
	o.at, p.at = time.Time{}, time.Time{}
	return o == p
}

func observe(p *v1alpha1.FlinkBlueGreenDeployment, at time.Time) observation {
	o := observation{at: at, state: p.Status.BlueGreenState, job: p.Status.JobStatus.State,
		active: p.Status.ActiveDeployment, activeRev: p.Status.ActiveRevision, target: p.Status.TargetRevision,
		errMsg: p.Status.Error, revisionAnn: p.Annotations[v1alpha1.RevisionAnnotation]}
	if c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition); c != nil && c.Status == "True" {
		o.reason = c.Reason
	}
	return o
}

// episode is one rollout as observed: from the first observation in
// progress to the first one out of it (or with another target).
type episode struct {
	job        string // namespace/name
	target     string
	kind       string // first, blue-green, in-place
	start, end time.Time
	outcome    string
	// firstWaiting is when the new colour first waited for a person
	// (Manual mode): no timer bounds the rollout after it.
	firstWaiting time.Time
}

// Episode kinds and outcomes.
const (
	kindFirst     = "first deployment"
	kindBlueGreen = "blue/green"
	kindInPlace   = "in place"

	outcomeCompleted  = "completed"
	outcomeAborted    = "aborted"
	outcomeFailed     = "failed"
	outcomeSuperseded = "superseded"
	outcomeOther      = "ended otherwise"
)

// recorder polls the FlinkBlueGreenDeployments, logs every change, and
// keeps the rollouts it saw: the transitions of the report and the
// durations the timer invariant bounds.
type recorder struct {
	e      *env
	tl     *timeline
	person *person

	mu       sync.Mutex
	last     map[string]observation
	current  map[string]*episode
	episodes []*episode
}

func newRecorder(e *env, tl *timeline, p *person) *recorder {
	return &recorder{e: e, tl: tl, person: p, last: map[string]observation{}, current: map[string]*episode{}}
}

// run polls every 500ms until ctx ends; a poll that fails (the API server
// is down) is skipped.
func (r *recorder) run(ctx context.Context) {
	for sleep(ctx, 500*time.Millisecond) {
		list := &v1alpha1.FlinkBlueGreenDeploymentList{}
		if err := r.e.c.List(ctx, list); err != nil {
			continue
		}
		now := time.Now()
		for i := range list.Items {
			p := &list.Items[i]
			r.record(p.Namespace+"/"+p.Name, observe(p, now))
			r.person.consider(ctx, p)
		}
	}
}

func (r *recorder) record(key string, o observation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, seen := r.last[key]
	r.last[key] = o
	ep := r.current[key]
	if ep != nil && ep.firstWaiting.IsZero() && o.reason == "WaitingForPromotion" {
		ep.firstWaiting = o.at
	}
	if seen && o.sameAs(prev) {
		return
	}
	r.tl.logf([]string{key}, "%s: %s %s active=%s rev=%s target=%s carries=%s%s%s", key, o.state, o.job, o.active,
		short(o.activeRev), short(o.target), short(o.revisionAnn), reasonText(o.reason), errText(o.errMsg))
	switch {
	case ep != nil && (!o.state.InProgress() || o.target != ep.target):
		r.finish(key, ep, o)
		if o.state.InProgress() {
			r.begin(key, o)
		}
	case ep == nil && o.state.InProgress():
		r.begin(key, o)
	}
}

func (r *recorder) begin(key string, o observation) {
	ep := &episode{job: key, target: o.target, start: o.at, kind: kindBlueGreen}
	switch {
	case o.active == "":
		ep.kind = kindFirst
	case o.state.Transitioning() && strings.HasSuffix(o.active, "-"+transitionColour(o.state)):
		ep.kind = kindInPlace
	}
	r.current[key] = ep
}

func transitionColour(s v1alpha1.BlueGreenState) string {
	if s == v1alpha1.TransitioningToGreen {
		return "green"
	}
	return "blue"
}

func (r *recorder) finish(key string, ep *episode, o observation) {
	ep.end = o.at
	switch {
	case o.state.InProgress():
		ep.outcome = outcomeSuperseded
	case o.job == v1alpha1.JobFailing && strings.Contains(o.errMsg, "abort"):
		ep.outcome = outcomeAborted
	case o.job == v1alpha1.JobFailing:
		ep.outcome = outcomeFailed
	case o.state.Active() && o.activeRev == ep.target:
		ep.outcome = outcomeCompleted
	default:
		ep.outcome = outcomeOther
	}
	delete(r.current, key)
	r.episodes = append(r.episodes, ep)
	r.tl.logf([]string{key}, "%s: rollout of %s (%s) %s after %.1fs", key, short(ep.target), ep.kind, ep.outcome,
		ep.end.Sub(ep.start).Seconds())
}

// snapshot returns copies of the finished episodes and of those in
// progress (end zero).
func (r *recorder) snapshot() []episode {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]episode, 0, len(r.episodes)+len(r.current))
	for _, ep := range r.episodes {
		out = append(out, *ep)
	}
	for _, ep := range r.current {
		out = append(out, *ep)
	}
	return out
}

func reasonText(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

func errText(e string) string {
	if e == "" {
		return ""
	}
	if len(e) > 160 {
		e = e[:160] + "…"
	}
	return " error=" + e
}

// short abbreviates a revision to its SHA's first 8 characters.
func short(rev string) string {
	if i := strings.Index(rev, "sha1:"); i >= 0 && len(rev) >= i+5+8 {
		return rev[i+5 : i+5+8]
	}
	return rev
}
