/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// metrics_observe.go: recording a GitRepository, an apply, a
// FlinkBlueGreenDeployment and a decision in the metrics, and forgetting a
// deleted object's series.

package reconcile

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// observeRepository records a GitRepository after a reconcile that took d.
func observeRepository(gr *v1alpha1.GitRepository, d time.Duration) {
	const kind = v1alpha1.GitRepositoryKind
	reconcileSeconds.WithLabelValues(kind, gr.Namespace, gr.Name).Observe(d.Seconds())
	setInfo(kind, gr.Namespace, gr.Name, gr.Status.Conditions, gr.IsSuspended())
}

// observeApplied records a successful apply of gr's revision at now.
func observeApplied(gr *v1alpha1.GitRepository, now time.Time) {
	lastApplied.WithLabelValues(v1alpha1.GitRepositoryKind, gr.Namespace, gr.Name).Set(unix(now))
}

// observeDeployment records what p's status shows after a reconcile that
// took d: readiness, blue/green state, the rollout under way and the end
// of the last successful one.
func observeDeployment(p *v1alpha1.FlinkBlueGreenDeployment, d time.Duration) {
	const kind = v1alpha1.FlinkBlueGreenDeploymentKind
	reconcileSeconds.WithLabelValues(kind, p.Namespace, p.Name).Observe(d.Seconds())
	setInfo(kind, p.Namespace, p.Name, p.Status.Conditions, p.Spec.Template.Spec.Suspended())
	for _, s := range v1alpha1.BlueGreenStates() {
		v := 0.0
		if p.Status.BlueGreenState == s {
			v = 1
		}
		stateGauge.WithLabelValues(p.Namespace, p.Name, string(s)).Set(v)
	}
	start, aborted := 0.0, 0.0
	for _, e := range p.Status.History {
		switch {
		case e.Outcome == v1alpha1.RolloutInProgress:
			start = unix(e.StartedAt.Time)
		case e.Outcome == v1alpha1.RolloutSucceeded && e.FinishedAt != nil:
			lastApplied.WithLabelValues(kind, p.Namespace, p.Name).Set(unix(e.FinishedAt.Time))
		case e.Outcome == v1alpha1.RolloutAborted && e.FinishedAt != nil:
			aborted = unix(e.FinishedAt.Time)
		}
	}
	rolloutStart.WithLabelValues(p.Namespace, p.Name).Set(start)
	lastAbort.WithLabelValues(p.Namespace, p.Name).Set(aborted)
	// At 0 before the first abort: increase() then sees that abort.
	abortsTotal.WithLabelValues(p.Namespace, p.Name)
}

// observeDecision records what a decision ended, once its status is
// written (prev is the status it was decided on): the rollouts its
// status.history ends, the savepoint it saw complete and its aborts. A
// decision made again after a failed write sees the same prev and is
// counted then, once; the next one decides on the written status.
func observeDecision(p *v1alpha1.FlinkBlueGreenDeployment, prev v1alpha1.FlinkBlueGreenDeploymentStatus, dec bluegreen.Decision, now time.Time) {
	for _, e := range dec.Status.History {
		if e.Outcome == v1alpha1.RolloutInProgress || e.FinishedAt == nil {
			continue
		}
		if i := slices.IndexFunc(prev.History, sameRollout(e)); i >= 0 && prev.History[i].Outcome != v1alpha1.RolloutInProgress {
			continue // ended before
		}
		transitionSeconds.WithLabelValues(p.Namespace, p.Name, string(e.Kind), string(e.Outcome)).
			Observe(seconds(e.FinishedAt.Sub(e.StartedAt.Time)))
	}
	if sp, old := dec.Status.Savepoint, prev.Savepoint; sp != nil && sp.Path != "" && sp.TriggerTimestamp != nil &&
		old != nil && old.Name == sp.Name && old.Path == "" {
		savepointSeconds.WithLabelValues(p.Namespace, p.Name).Observe(seconds(now.Sub(sp.TriggerTimestamp.Time)))
	}
	for _, e := range dec.Events {
		if e.Reason == "Aborted" {
			abortsTotal.WithLabelValues(p.Namespace, p.Name).Inc()
		}
	}
}

// sameRollout matches the history entry of one rollout before and after a
// decision (entries are never reordered, only ended or dropped when old).
func sameRollout(e v1alpha1.RolloutRecord) func(v1alpha1.RolloutRecord) bool {
	return func(o v1alpha1.RolloutRecord) bool {
		return o.StartedAt.Equal(&e.StartedAt) && o.Kind == e.Kind && o.To == e.To && o.Revision == e.Revision
	}
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// seconds clamps at 0: a savepoint's trigger time is rounded up to the
// second the API server keeps.
func seconds(d time.Duration) float64 { return max(d, 0).Seconds() }

// infoLabels are the resource_info labels last set per object: a change
// of readiness replaces the object's series rather than adding one.
var infoLabels = struct {
	sync.Mutex
	m map[string][]string
}{m: map[string][]string{}}

func setInfo(kind, namespace, name string, conds []metav1.Condition, suspended bool) {
	ready, reason := string(metav1.ConditionUnknown), ""
	if c := findCondition(conds, v1alpha1.ReadyCondition); c != nil {
		ready, reason = string(c.Status), c.Reason
	}
	values := []string{kind, namespace, name, ready, reason, boolLabel(conditionTrue(conds, v1alpha1.StalledCondition)),
		boolLabel(suspended), boolLabel(conditionTrue(conds, v1alpha1.CommitStatusFailedCondition))}
	key := kind + "/" + namespace + "/" + name
	infoLabels.Lock()
	defer infoLabels.Unlock()
	if old, ok := infoLabels.m[key]; ok && !slices.Equal(old, values) {
		resourceInfo.DeleteLabelValues(old...)
	}
	infoLabels.m[key] = values
	resourceInfo.WithLabelValues(values...).Set(1)
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// partialDeleter is a metric vector: DeletePartialMatch deletes every
// series whose labels include the given ones.
type partialDeleter interface {
	DeletePartialMatch(prometheus.Labels) int
}

// forgetMetrics deletes every series of a deleted (or deleting) object. A
// reconcile of the same object never runs at the same time, and one that
// finds it gone observes nothing, so no series comes back.
func forgetMetrics(kind string, id types.NamespacedName) {
	infoLabels.Lock()
	defer infoLabels.Unlock()
	delete(infoLabels.m, kind+"/"+id.Namespace+"/"+id.Name)
	shared := prometheus.Labels{"kind": kind, "namespace": id.Namespace, "name": id.Name}
	for _, v := range []partialDeleter{reconcileSeconds, resourceInfo, lastApplied} {
		v.DeletePartialMatch(shared)
	}
	own := prometheus.Labels{"namespace": id.Namespace, "name": id.Name}
	for _, v := range ownMetrics[kind] {
		v.DeletePartialMatch(own)
	}
}

// ownMetrics are the metrics of one kind, labelled namespace and name.
var ownMetrics = map[string][]partialDeleter{
	v1alpha1.GitRepositoryKind:            {commitStatusTotal},
	v1alpha1.FlinkBlueGreenDeploymentKind: {stateGauge, transitionSeconds, rolloutStart, savepointSeconds, lastAbort, abortsTotal},
}
