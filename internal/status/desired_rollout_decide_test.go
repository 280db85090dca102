/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// sim is a tiny world around Decide + RolloutDesired + a fake forge.
type sim struct {
	t        *testing.T
	p        *v1alpha1.FlinkBlueGreenDeployment
	kids     map[bluegreen.Color]*bluegreen.Child
	healthy  map[bluegreen.Color]bool
	snap     *bluegreen.Snapshot
	snapOK   bool
	now      time.Time
	online   bool
	forge    map[string][]Entry // rev -> history (newest last)
	actions  []string
	nsnap    int
	lastDesc []Desired
	jobState map[bluegreen.Color]string // override of an unhealthy child's job state
}

func newSim(t *testing.T, stateful bool) *sim {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	p.Namespace, p.Name, p.Generation = "flink", "orders", 1
	p.Annotations = map[string]string{}
	mode := v1alpha1.UpgradeModeStateless
	if stateful {
		mode = v1alpha1.UpgradeModeSavepoint
	}
	p.Spec.Configuration = map[string]string{v1alpha1.AbortGracePeriodKey: "10 min"}
	p.Spec.Template.Spec = v1alpha1.FlinkDeploymentSpec{Image: "img:A",
		Job: &v1alpha1.JobSpec{JarURI: "local:///job.jar", UpgradeMode: mode}}
	return &sim{t: t, p: p, kids: map[bluegreen.Color]*bluegreen.Child{},
		healthy: map[bluegreen.Color]bool{bluegreen.Blue: true, bluegreen.Green: true},
		snapOK:  true, jobState: map[bluegreen.Color]string{}, now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), online: true, forge: map[string][]Entry{}}
}

func rev(c string) string { return "main@sha1:" + strings.Repeat(c, 40) }

// commit stamps a new revision with an image (transition) and parallelism (in place).
func (s *sim) commit(r, image, parallelism string) {
	s.p.Annotations[v1alpha1.RevisionAnnotation] = r
	s.p.Spec.Template.Spec.Image = image
	if parallelism == "" {
		s.p.Spec.Template.Spec.FlinkConfiguration = nil
	} else {
		s.p.Spec.Template.Spec.FlinkConfiguration = &apiextensionsv1.JSON{Raw: []byte(`{"parallelism.default":"` + parallelism + `"}`)}
	}
	s.p.Generation++
}

func (s *sim) suspend(r string, on bool) {
	s.p.Annotations[v1alpha1.RevisionAnnotation] = r
	if on {
		s.p.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	} else {
		s.p.Spec.Template.Spec.Job.State = ""
	}
	s.p.Generation++
}

func (s *sim) refreshKid(c bluegreen.Color) {
	k := s.kids[c]
	if k == nil {
		return
	}
	k.ObservedGeneration = k.Generation
	switch {
	case k.Spec.Suspended():
		k.LifecycleState, k.JobState = bluegreen.LifecycleSuspended, "FINISHED"
	case s.healthy[c]:
		k.LifecycleState, k.JobState = bluegreen.LifecycleStable, bluegreen.JobRunning
	default:
		k.LifecycleState, k.JobState = "DEPLOYED", "RECONCILING"
		if js := s.jobState[c]; js != "" {
			k.LifecycleState, k.JobState = bluegreen.LifecycleStable, js
		}
	}
}

// step runs one reconcile: Decide, actions, report.
func (s *sim) step() {
	s.t.Helper()
	for _, c := range []bluegreen.Color{bluegreen.Blue, bluegreen.Green} {
		s.refreshKid(c)
	}
	in := bluegreen.Input{Parent: s.p.DeepCopy(), Blue: s.copyKid(bluegreen.Blue), Green: s.copyKid(bluegreen.Green),
		Snapshot: s.snap, Window: bluegreen.Window{Open: true}, Now: s.now}
	dec, err := bluegreen.Decide(in)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, a := range dec.Actions {
		switch a.Type {
		case bluegreen.ApplyChild:
			k := s.kids[a.Child.Color]
			if k == nil {
				k = &bluegreen.Child{Name: a.Child.Name, Color: a.Child.Color, Created: s.now}
				s.kids[a.Child.Color] = k
			}
			k.Spec, k.Revision = *a.Child.Spec.DeepCopy(), a.Child.Revision
			k.Generation++
			k.JobID = fmt.Sprintf("job-%d", k.Generation)
			s.actions = append(s.actions, "apply "+a.Child.Name+" "+short(a.Child.Revision)+" suspended="+fmt.Sprint(a.Child.Spec.Suspended()))
		case bluegreen.DeleteChild:
			for c, k := range s.kids {
				if k.Name == a.ChildName {
					delete(s.kids, c)
				}
			}
			s.actions = append(s.actions, "delete "+a.ChildName)
		case bluegreen.CreateSnapshot:
			if s.snap == nil || s.snap.Name != a.Snapshot.Name {
				s.nsnap++
				st := bluegreen.SnapshotCompleted
				if !s.snapOK {
					st = bluegreen.SnapshotInProgress
				}
				s.snap = &bluegreen.Snapshot{Name: a.Snapshot.Name, State: st, Path: fmt.Sprintf("/sp/%d", s.nsnap)}
			}
			s.actions = append(s.actions, "snapshot "+a.Snapshot.JobName)
		}
	}
	s.p.Status = dec.Status
	s.report()
	s.now = s.now.Add(time.Second)
}

func (s *sim) copyKid(c bluegreen.Color) *bluegreen.Child {
	if k := s.kids[c]; k != nil {
		cp := *k
		return &cp
	}
	return nil
}

func (s *sim) report() {
	desired := RolloutDesired(s.p)
	s.lastDesc = desired
	if !s.online {
		return
	}
	missing := Unacknowledged(desired, s.p.Status.CommitStatuses, "gitea")
	var acked []v1alpha1.CommitStatusRecord
	for _, d := range missing {
		h := s.forge[d.Revision]
		if len(h) == 0 || h[len(h)-1].State != d.Status.State || h[len(h)-1].Description != d.Status.Description {
			s.forge[d.Revision] = append(h, d.Status)
		}
		acked = append(acked, v1alpha1.CommitStatusRecord{Context: d.Status.Context, Revision: d.Revision,
			State: string(d.Status.State), Description: d.Status.Description})
	}
	s.p.Status.CommitStatuses = MergeRecords(s.p.Status.CommitStatuses, acked)
}

func short(r string) string {
	if len(r) > 11 {
		return r[10:11]
	}
	return r
}

func (s *sim) history(r string) string {
	var b []string
	for _, e := range s.forge[r] {
		b = append(b, string(e.State)+":"+e.Description)
	}
	return strings.Join(b, " | ")
}

func (s *sim) latest(r string) Entry {
	h := s.forge[r]
	if len(h) == 0 {
		return Entry{}
	}
	return h[len(h)-1]
}

func (s *sim) dump() {
	s.t.Helper()
	s.t.Logf("state=%s active=%s activeRev=%s target=%s job=%s err=%q", s.p.Status.BlueGreenState, s.p.Status.ActiveDeployment,
		short(s.p.Status.ActiveRevision), short(s.p.Status.TargetRevision), s.p.Status.JobStatus.State, s.p.Status.Error)
	for _, c := range "ABCDEFGH" {
		r := rev(string(c))
		if h := s.history(r); h != "" {
			s.t.Logf("  %c: %s", c, h)
		}
	}
	for _, r := range s.p.Status.CommitStatuses {
		s.t.Logf("  record %s %s posted=%d", short(r.Revision), r.State, r.Pending)
	}
	s.t.Logf("  actions: %v", s.actions)
}

// run steps n times.
func (s *sim) run(n int) {
	for i := 0; i < n; i++ {
		s.step()
	}
}

// boot deploys A and lets it go live on blue.
func (s *sim) boot() {
	s.commit(rev("a"), "img:A", "")
	s.run(4)
	if s.p.Status.BlueGreenState != v1alpha1.ActiveBlue || s.latest(rev("a")).State != StateSuccess {
		s.dump()
		s.t.Fatalf("boot failed")
	}
}

func (s *sim) abortNow() {
	s.p.Annotations[v1alpha1.AbortRequestedAtAnnotation] = s.now.String()
}
func (s *sim) retryNow() {
	s.p.Annotations[v1alpha1.RetryRequestedAtAnnotation] = s.now.String()
}
func (s *sim) promoteNow() {
	s.p.Annotations[v1alpha1.PromoteRequestedAtAnnotation] = s.now.String()
}
