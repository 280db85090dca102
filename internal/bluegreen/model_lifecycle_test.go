/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// The state lifecycle in the model: a deletion (a prune, kubectl delete),
// held by the final-savepoint finalizer until a decision finalizes or the
// deletion is overdue; the object gone, its children left to the garbage
// collector; and a re-creation from Git (a revert), on purpose empty
// (initial-state: empty) or renamed (restore-from). The invariant: a
// stateful first job never starts from empty state while a record of the
// name it restores exists, unless Git says initial-state: empty; and a
// deletion never lets go of the job holding the latest state before a
// record of it is kept (or the savepoint timeout is over).

var lifecycleEvents = []mEvent{
	{"deleted (a prune, kubectl delete)", (*model).markDeleted},
	{"re-created from Git", func(m *model) (bool, error) { return m.recreate(m.P.Name, nil) }},
	{"re-created from Git with initial-state: empty", func(m *model) (bool, error) {
		return m.recreate(m.P.Name, map[string]string{v1alpha1.InitialStateAnnotation: v1alpha1.InitialStateEmpty})
	}},
	{"re-created from Git renamed, with restore-from", func(m *model) (bool, error) {
		return m.recreate(renamed(m.P.Name), map[string]string{v1alpha1.RestoreFromAnnotation: m.P.Name})
	}},
}

// orphanEvents are a deletion that orphans the children and a
// re-creation over them with another job. They are explored on their own
// (TestExploreOrphanedChildren): the searches of allEvents and their
// state graph's golden stay as they are.
var orphanEvents = []mEvent{
	{"deleted with --cascade=orphan", (*model).markOrphaned},
	{"re-created from Git with another job (jarURI)", (*model).recreateOtherJob},
}

func renamed(name string) string {
	if name == "orders" {
		return "orders-v2"
	}
	return "orders"
}

// markDeleted sets the deletion timestamp; the finalizer holds the object.
func (m *model) markDeleted() (bool, error) {
	if m.Gone || !m.P.DeletionTimestamp.IsZero() {
		return false, nil
	}
	t := metav1.NewTime(m.Now.Truncate(1e9))
	m.P.DeletionTimestamp = &t
	return true, nil
}

// gone is the finalizer removed: the object goes, and the garbage
// collector deletes the children it owned. The job holding the latest
// state may go only once its record is kept, or the deletion is overdue.
// A deletion that orphans the children leaves them running, owned by
// nothing, their jobs holding the state; the collector deletes no child
// owned by nothing either.
func (m *model) gone(overdue bool) error {
	if slices.Contains(m.P.Finalizers, metav1.FinalizerOrphanDependents) {
		for _, x := range m.C {
			x.Unowned = !x.Deleting
		}
		m.Gone = true
		return nil
	}
	for _, x := range m.C {
		if x.Unowned {
			continue
		}
		if !x.Deleting && m.holds(x) && !overdue && !m.finalRecordCovers(x) {
			return fmt.Errorf("finalizer removed while %s, which holds the latest state, has no final record (%s)", x.Name, m.describe())
		}
		x.Deleting = true
	}
	m.Gone = true
	if m.orphans() {
		return nil // the children owned by nothing run on, with the state
	}
	rec := m.recordFor(m.P.Name)
	switch {
	case rec == nil:
		m.Holder, m.PathsSeen = "", map[string]bool{"": true}
	case rec.State == SnapshotCompleted && !rec.Existing && m.carries(m.Paths[strings.TrimPrefix(rec.Path, "file:")]):
		// The record holds the latest state: the next job must carry it.
	default:
		// The deletion gave up on the latest state (the savepoint failed
		// or timed out, or the job did not run): the next first job
		// starts from what the record holds, or not at all.
		m.Holder, m.PathsSeen = "", map[string]bool{}
		if p := rec.RestorePath(); p != "" {
			m.PathsSeen[p] = true
		}
	}
	return nil
}

// finalRecordCovers: the deletion may let go of x, which holds the latest
// state: its final savepoint completed (a fresh one when its job runs),
// failed or was refused (the deletion goes on, with a warning), or the
// savepoint timeout counted from when it was asked for is over.
func (m *model) finalRecordCovers(x *mChild) bool {
	s := m.Snaps[FinalSnapshotName(m.P)]
	switch {
	case !x.Spec.Stateful() || m.DenySnap:
		return true
	case s == nil:
		return false
	case s.State == SnapshotTriggerPending:
		return !m.Now.Before(s.At.Add(mSpTime))
	case s.State == SnapshotCompleted && s.Existing:
		return x.Job != JobRunning // a running job's state is newer than any savepoint taken before
	}
	return true
}

// recreate applies the object again from Git with a new uid and no status:
// the same template without an initialSavepointPath, named name, with
// annotations.
func (m *model) recreate(name string, annotations map[string]string) (bool, error) {
	if !m.Gone || name != m.P.Name && len(m.C) > 0 {
		return false, nil // a renamed object's children must not meet the old ones
	}
	p := &v1alpha1.FlinkBlueGreenDeployment{Spec: *m.P.Spec.DeepCopy()}
	p.Name, p.Namespace, p.Generation, p.UID = name, m.P.Namespace, 1, types.UID(m.next("uid"))
	p.Spec.Template.Spec.Job.InitialSavepointPath = ""
	p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: m.next("r")}
	for k, v := range annotations {
		p.Annotations[k] = v
	}
	m.P, m.Gone, m.Fresh = p, false, true
	for _, x := range m.C {
		x.Foreign, x.Unowned = x.Deleting || !x.Unowned, x.Unowned && !x.Deleting
	}
	m.T, m.RejKey, m.LastFailed, m.FailedAct, m.AltHolder = mTimers{}, "", "", nil, ""
	if m.orphans() {
		// Its job runs already, in the children it adopts; as with a
		// wiped status, their transition is lost.
		m.Fresh, m.AltHolder = false, m.stillRunningSource()
	}
	if m.Holder == "" && m.recordFor(RecordOf(p)) == nil {
		m.PathsSeen[""] = true
	}
	return true, nil
}

// markOrphaned is a deletion with propagationPolicy Orphan: the API
// server puts the orphan finalizer beside the final-savepoint one.
func (m *model) markOrphaned() (bool, error) {
	ok, err := m.markDeleted()
	if ok {
		m.P.Finalizers = append(m.P.Finalizers, metav1.FinalizerOrphanDependents)
	}
	return ok, err
}

// recreateOtherJob re-creates the object over its orphans with another
// job (jarURI): the orphans run a program that is not its, and hold no
// state of its own; its first job starts from its spec.
func (m *model) recreateOtherJob() (bool, error) {
	if !m.orphans() {
		return false, nil
	}
	ok, err := m.recreate(m.P.Name, nil)
	if ok {
		m.P.Spec.Template.Spec.Job.JarURI = "local:///opt/flink/other-" + m.next("jar") + ".jar"
		m.Holder, m.AltHolder, m.PathsSeen, m.Fresh = "", "", map[string]bool{"": true}, true
	}
	return ok, err
}

// orphans reports children owned by nothing, not being deleted.
func (m *model) orphans() bool {
	for _, x := range m.C {
		if x.Unowned && !x.Deleting {
			return true
		}
	}
	return false
}

// checkUnowned: a deletion that orphans the children deletes none; a
// child owned by nothing is never deleted; it is applied only to be
// adopted, when it runs the object's job, with the spec it runs (the job
// is not touched).
func (m *model) checkUnowned(a Action) error {
	if a.Type == DeleteChild && slices.Contains(m.P.Finalizers, metav1.FinalizerOrphanDependents) {
		return fmt.Errorf("%s deleted by a deletion that orphans the children", a.ChildName)
	}
	for _, x := range m.C {
		switch {
		case !x.Unowned || x.Deleting:
		case a.Type == DeleteChild && a.ChildName == x.Name:
			return fmt.Errorf("%s, owned by nothing, deleted", x.Name)
		case a.Type != ApplyChild || a.Child.Name != x.Name:
		case x.Spec.Job.JarURI != m.P.Spec.Template.Spec.Job.JarURI:
			return fmt.Errorf("%s, owned by nothing, runs another job (%s), and was applied", x.Name, x.Spec.Job.JarURI)
		case !equalSpec(&x.Spec, &a.Child.Spec) || x.Revision != a.Child.Revision:
			return fmt.Errorf("%s, owned by nothing, re-specced as it was adopted", x.Name)
		}
	}
	return nil
}

// createRecord is a CreateSnapshot that records a deletion's state.
func (m *model) createRecord(s *SnapshotSpec) {
	ms := &mSnap{Job: s.JobName, State: SnapshotTriggerPending, At: m.Now, Record: true, Of: m.P.Name,
		LastCompleted: s.Record.LastCompleted}
	if s.Record.Existing != "" {
		// As the Flink operator: a savepoint that already exists is
		// complete as created.
		ms.State, ms.Path, ms.Existing = SnapshotCompleted, s.Record.Existing, true
	}
	m.Snaps[s.Name] = ms
}

// recordFor is the newest record of the name, as the adapter reads it.
func (m *model) recordFor(of string) *Record {
	var names []string
	for n, s := range m.Snaps {
		if s.Record && s.Of == of {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := m.Snaps[names[i]], m.Snaps[names[j]]
		return a.At.After(b.At) || a.At.Equal(b.At) && names[i] > names[j]
	})
	s := m.Snaps[names[0]]
	return &Record{Name: names[0], Of: of, State: s.State, Path: s.Path, Existing: s.Existing,
		LastCompleted: s.LastCompleted, Job: s.Job, Created: s.At.Truncate(1e9)}
}

// observeRecord is the adapter's read of the record before the first job.
func (m *model) observeRecord(in *Input) {
	s := m.P.Status.BlueGreenState
	if !m.P.DeletionTimestamp.IsZero() || s != "" && s != v1alpha1.InitializingBlue {
		return
	}
	// The model re-creates only what is gone: a restore-from source
	// never lives, and every record is final.
	if in.Record = m.recordFor(RecordOf(m.P)); in.Record != nil {
		in.Record.Final = true
	}
}

// checkFirstStart: a new stateful child with no initialSavepointPath
// starts from empty state; never while a record of the name exists,
// unless Git says initial-state: empty.
func (m *model) checkFirstStart(cs *ChildSpec) error {
	if !cs.Spec.Stateful() || cs.Spec.Job.InitialSavepointPath != "" || StartsEmptyOnPurpose(m.P) || !m.firstJob() {
		return nil
	}
	if r := m.recordFor(RecordOf(m.P)); r != nil {
		return fmt.Errorf("%s starts from empty state while FlinkStateSnapshot %s records the state of %s (%s, path %q)",
			cs.Name, r.Name, r.Of, r.State, r.RestorePath())
	}
	return nil
}

// restoresRecord: cs is a re-created object's first job, started from the
// state a record kept (however old: the deletion said how much it kept).
func (m *model) restoresRecord(cs *ChildSpec) bool {
	r := m.recordFor(RecordOf(m.P))
	return m.firstJob() && r != nil && r.RestorePath() == cs.Spec.Job.InitialSavepointPath
}

// firstJob: the object has no child of its own yet.
func (m *model) firstJob() bool {
	for _, x := range m.C {
		if !x.Foreign {
			return false
		}
	}
	return true
}

// gitChoosesFirstPath: a commit that sets an initialSavepointPath before a
// re-created object's first job chooses where that job starts (Git wins
// over the record), until one of its jobs is made active; removed again,
// the record applies again.
func (m *model) gitChoosesFirstPath() {
	p := m.P.Spec.Template.Spec.Job.InitialSavepointPath
	if p == "" || m.Holder == "" || !m.Fresh {
		return
	}
	m.PathsSeen = map[string]bool{p: true}
	if r := m.recordFor(RecordOf(m.P)); r != nil && r.RestorePath() != "" {
		m.PathsSeen[r.RestorePath()] = true
	}
	m.Holder = ""
}
