/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The savepoints `bg-gitops rollback --from-savepoint` offers: those of the
// job that ran the chosen revision, taken when it was really replaced, or
// its last one.

package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// jobSavepoint is a completed savepoint of one job.
type jobSavepoint struct {
	name  string // the FlinkStateSnapshot; empty for a path only history names
	path  string
	taken time.Time // zero when unknown
}

// savepointChoice is what --from-savepoint may start from for rollout i.
type savepointChoice struct {
	job string
	// replacedBy is the rollout that replaced the job (Succeeded, from
	// its colour); nil while it runs or was replaced by no rollout.
	replacedBy *v1alpha1.RolloutRecord
	// saved are the job's completed savepoints, oldest first.
	saved []jobSavepoint
	// startedFrom is the savepoint the job started from.
	startedFrom string
}

// chooseSavepoints reads the savepoints of the job rollout i started.
func chooseSavepoints(ctx context.Context, c client.Reader, ns string, h []v1alpha1.RolloutRecord, i int) (*savepointChoice, error) {
	snaps, err := listSnapshots(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	ch := &savepointChoice{job: h[i].To, startedFrom: h[i].RestoredFrom}
	end := time.Time{}
	for j := range h[i+1:] {
		r := &h[i+1+j]
		if r.From == h[i].To && r.Outcome == v1alpha1.RolloutSucceeded && ch.replacedBy == nil {
			ch.replacedBy = r
		}
		if r.To == h[i].To {
			end = r.StartedAt.Time
			break
		}
	}
	ch.saved = savepointsOf(snaps, h[i], end)
	// The savepoint of the replacement, its snapshot pruned: the job's
	// last, as the job stopped after it.
	if r := ch.replacedBy; r != nil && r.SavepointPath != "" && ch.find(r.SavepointPath) == nil {
		ch.saved = append(ch.saved, jobSavepoint{name: r.SavepointName, path: r.SavepointPath})
	}
	return ch, nil
}

// listSnapshots lists the FlinkStateSnapshots of namespace ns.
func listSnapshots(ctx context.Context, c client.Reader, ns string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK.GroupVersion().WithKind(v1alpha1.FlinkStateSnapshotGVK.Kind + "List"))
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list FlinkStateSnapshots in %s: %w", ns, err)
	}
	return l.Items, nil
}

// savepointsOf are the completed savepoints of r's job: of its child,
// created after r started and before end (the next rollout to deploy that
// child again; zero: none), not of another revision's job; oldest first.
func savepointsOf(snaps []unstructured.Unstructured, r v1alpha1.RolloutRecord, end time.Time) []jobSavepoint {
	start := r.StartedAt.Truncate(time.Second)
	var out []jobSavepoint
	for k := range snaps {
		s := &snaps[k]
		created := s.GetCreationTimestamp().Time
		if treeString(s, "spec", "jobReference", "name") != r.To || treeString(s, "status", "state") != "COMPLETED" ||
			treeString(s, "status", "path") == "" || created.Before(start) || !end.IsZero() && !created.Before(end) {
			continue
		}
		if rev := s.GetAnnotations()[v1alpha1.JobRevisionAnnotation]; rev != "" && rev != r.Revision {
			continue
		}
		taken, ok := treeTime(s, "status", "resultTimestamp")
		if !ok {
			taken = created
		}
		out = append(out, jobSavepoint{name: s.GetName(), path: treeString(s, "status", "path"), taken: taken})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].taken.Before(out[b].taken) })
	return out
}

// find is the savepoint of the job at path; nil when it is none of them.
func (ch *savepointChoice) find(path string) *jobSavepoint {
	for k := range ch.saved {
		if samePath(ch.saved[k].path, path) {
			return &ch.saved[k]
		}
	}
	return nil
}

// last is the job's last savepoint; nil when none is known.
func (ch *savepointChoice) last() *jobSavepoint {
	if len(ch.saved) == 0 {
		return nil
	}
	return &ch.saved[len(ch.saved)-1]
}

// offered are the savepoints --from-savepoint offers: the one taken when
// the job was replaced and its last one (the same, mostly).
func (ch *savepointChoice) offered() []jobSavepoint {
	var out []jobSavepoint
	if r := ch.replacedBy; r != nil && r.SavepointPath != "" {
		out = append(out, *ch.find(r.SavepointPath))
	}
	if l := ch.last(); l != nil && (len(out) == 0 || !samePath(out[0].path, l.path)) {
		out = append(out, *l)
	}
	return out
}

// pick is the path to start from: path when given, else the job's last
// savepoint, else the one it started from. A savepoint of the job older
// than its last one is refused unless olderThanLast: the job's state since
// would be lost.
func (ch *savepointChoice) pick(path string, olderThanLast bool) (string, error) {
	if path == "" {
		if l := ch.last(); l != nil {
			return l.path, nil
		}
		return ch.startedFrom, nil
	}
	l := ch.last()
	if l == nil || samePath(l.path, path) || olderThanLast {
		return path, nil
	}
	if s := ch.find(path); s != nil || samePath(path, ch.startedFrom) {
		return "", fmt.Errorf("--savepoint %s is older than the last savepoint of %s's job, %s: starting from it drops the state since; "+
			"pass --older-than-last as well if that is what you want", path, ch.job, l.path)
	}
	return path, nil
}

// print lists the offered savepoints with their age, the chosen marked.
func (ch *savepointChoice) print(out io.Writer, now time.Time, chosen string) {
	offered := ch.offered()
	if len(offered) == 0 {
		fmt.Fprintf(out, "\nNo savepoint of %s's job is known", ch.job)
		if ch.startedFrom != "" {
			fmt.Fprintf(out, "; it started from %s", ch.startedFrom)
		}
		fmt.Fprintln(out, ".")
		return
	}
	fmt.Fprintf(out, "\nSavepoints of %s's job:\n", ch.job)
	for _, s := range offered {
		mark := " "
		if samePath(s.path, chosen) {
			mark = "*"
		}
		fmt.Fprintf(out, "  %s %s  %s  (%s)\n", mark, s.path, savepointAge(now, s.taken), ch.why(s))
	}
}

// why says what makes s a savepoint to offer.
func (ch *savepointChoice) why(s jobSavepoint) string {
	var whys []string
	if r := ch.replacedBy; r != nil && samePath(r.SavepointPath, s.path) {
		whys = append(whys, "taken when "+shortRevision(r.Revision)+" replaced it")
	}
	if l := ch.last(); l != nil && samePath(l.path, s.path) {
		whys = append(whys, "its last")
	} else if l != nil {
		whys = append(whys, "older than its last: only with --older-than-last")
	}
	if len(whys) == 0 {
		return "its last"
	}
	return strings.Join(whys, ", ")
}

func savepointAge(now, taken time.Time) string {
	if taken.IsZero() {
		return "taken at an unknown time"
	}
	return "taken " + duration.HumanDuration(now.Sub(taken)) + " ago"
}

// samePath compares savepoint paths in either spelling of a local one
// Flink accepts ("file:/sp/x", "file:///sp/x"); empty is no path.
func samePath(a, b string) bool {
	return a != "" && bluegreen.SavepointPath(a) == bluegreen.SavepointPath(b)
}
