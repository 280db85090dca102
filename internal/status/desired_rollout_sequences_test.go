/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Sequences of decisions, commits and forge outages, run through
// bluegreen.Decide and RolloutDesired by the simulation in
// desired_rollout_decide_test.go: each pins the rollout statuses a
// commit ends with.
package status

import (
	"testing"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

func TestRolloutSequenceSanity(t *testing.T) {
	s := newSim(t, true)
	s.boot()
	s.commit(rev("b"), "img:B", "")
	s.run(6)
	s.dump()
	if s.latest(rev("b")).State != StateSuccess {
		t.Fatal("B not success")
	}
}

// An aborted in-place change keeps its failure when a later commit moves
// the target on.
func TestRolloutSequenceInPlaceAbortKeepsItsFailure(t *testing.T) {
	s := newSim(t, true)
	s.boot()
	s.healthy[bluegreen.Blue] = false
	s.commit(rev("b"), "img:A", "4") // in-place: parallelism
	s.run(2)
	s.now = s.now.Add(11 * 60e9)
	s.run(2)
	s.dump()
	if s.latest(rev("b")).State != StateFailure {
		t.Fatalf("B should have failed first: %s", s.history(rev("b")))
	}
	s.healthy[bluegreen.Blue] = true
	s.commit(rev("c"), "img:A", "") // revert
	s.run(1)
	s.dump()
	if s.latest(rev("b")).State == StateSuccess {
		t.Errorf("aborted in-place revision B now shows success: %s", s.history(rev("b")))
	}
	s.run(4)
	s.dump()
}

// A revision that went live during a forge outage gets success once the
// forge is back, not superseded, though a later commit moved the target on.
func TestRolloutSequenceWentLiveDuringOutageIsASuccess(t *testing.T) {
	s := newSim(t, false)
	s.boot()
	s.commit(rev("b"), "img:B", "")
	s.run(1) // pending for B posted
	s.online = false
	s.run(4) // B goes live, not posted
	if s.p.Status.ActiveRevision != rev("b") {
		s.dump()
		t.Fatal("B not live")
	}
	s.commit(rev("c"), "img:B", "4") // in-place change
	s.run(4)
	s.online = true
	s.run(2)
	s.dump()
	if e := s.latest(rev("b")); e.State != StateSuccess {
		t.Errorf("B went live but shows %s %q", e.State, e.Description)
	}
}

// A commit that arrives while a savepoint is taken, and is followed by
// another before it ends, still gets a rollout status.
func TestRolloutSequenceMiddleCommitDuringSavepointGetsAVerdict(t *testing.T) {
	s := newSim(t, true)
	s.boot()
	s.snapOK = false
	s.commit(rev("b"), "img:B", "")
	s.run(2)
	s.commit(rev("c"), "img:C", "")
	s.run(2)
	s.commit(rev("d"), "img:D", "")
	s.run(1)
	s.snapOK = true
	s.snap.State = bluegreen.SnapshotCompleted
	s.run(6)
	s.dump()
	if s.history(rev("c")) == "" {
		t.Errorf("commit C reached the object (annotation) but never got a rollout status")
	}
}

// The bound on pending statuses counts pendings only, not verdicts: after
// an abort and a retry in Manual mode the wait for promotion is posted.
func TestRolloutSequenceBoundCountsOnlyPending(t *testing.T) {
	s := newSim(t, true)
	s.p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	s.boot()
	s.commit(rev("b"), "img:B", "")
	s.run(4) // savepoint, starting, waiting for promotion
	s.abortNow()
	s.run(2)
	s.dump()
	s.retryNow()
	s.run(6)
	s.dump()
	n := 0
	for _, e := range s.forge[rev("b")] {
		if e.State == StatePending {
			n++
		}
	}
	t.Logf("pending posted for B: %d; latest %q", n, s.latest(rev("b")).Description)
	phase, _ := rolloutPhase(s.p)
	if s.latest(rev("b")).Description != phase {
		t.Errorf("only %d pendings posted for B (bound 7), yet the phase %q is not posted; forge shows %q", n, phase, s.latest(rev("b")).Description)
	}
}

// Abort requested and a revert pushed before the next reconcile.
func TestRolloutSequenceAbortAndRevertTogetherDeleteTheLeftover(t *testing.T) {
	s := newSim(t, true)
	s.boot()
	s.healthy[bluegreen.Green] = false
	s.commit(rev("b"), "img:B", "")
	s.run(3)
	s.abortNow()
	s.commit(rev("c"), "img:A", "")
	s.run(3)
	s.dump()
	if s.kids[bluegreen.Green] != nil {
		t.Errorf("leftover %s (suspended=%v) not deleted after the revert", s.kids[bluegreen.Green].Name, s.kids[bluegreen.Green].Spec.Suspended())
	}
	t.Logf("B: %s", s.history(rev("b")))
	t.Logf("C: %s", s.history(rev("c")))
}

// Abort then revert (separate reconciles): the promised path.
func TestRolloutSequenceAbortThenRevert(t *testing.T) {
	s := newSim(t, true)
	s.boot()
	s.healthy[bluegreen.Green] = false
	s.commit(rev("b"), "img:B", "")
	s.run(3)
	s.abortNow()
	s.run(2)
	s.commit(rev("c"), "img:A", "")
	s.run(3)
	s.dump()
	if s.kids[bluegreen.Green] != nil {
		t.Errorf("leftover not deleted")
	}
	if e := s.latest(rev("c")); e.State != StateSuccess {
		t.Errorf("C: %v", e)
	}
}

// An aborted first deployment keeps its failure when a later commit
// suspends the job.
func TestRolloutSequenceFirstDeploymentAbortedThenSuspended(t *testing.T) {
	s := newSim(t, true)
	s.healthy[bluegreen.Blue] = false
	s.commit(rev("a"), "img:A", "")
	s.run(2)
	s.now = s.now.Add(11 * 60e9)
	s.run(2)
	s.dump()
	if s.latest(rev("a")).State != StateFailure {
		t.Fatalf("A: %s", s.history(rev("a")))
	}
	s.suspend(rev("s"), true)
	s.run(2)
	s.dump()
	t.Logf("A: %s", s.history(rev("a")))
	t.Logf("S: %s", s.history(rev("s")))
	if s.latest(rev("a")).State == StateSuccess {
		t.Errorf("the aborted first deployment A now shows success %q", s.latest(rev("a")).Description)
	}
}

// An active job that crash-loops while a change waits for it does not post
// a new status on the commit for every change of its state: at most
// MaxPending pendings and one verdict.
func TestRolloutSequenceCrashLoopingActiveJobPostsOneFailure(t *testing.T) {
	s := newSim(t, true)
	s.boot()
	s.healthy[bluegreen.Blue] = false
	s.commit(rev("b"), "img:B", "")
	for i := 0; i < 30; i++ {
		s.jobState[bluegreen.Blue] = []string{"RESTARTING", "FAILING", "CREATED"}[i%3]
		s.step()
	}
	s.dump()
	t.Logf("B: %d statuses posted", len(s.forge[rev("b")]))
	if len(s.forge[rev("b")]) > MaxPending+1 {
		t.Errorf("%d statuses posted to B while the active job crash-loops before the transition starts", len(s.forge[rev("b")]))
	}
}

// Adoption (status lost) suspends the colour it does not take.
func TestRolloutSequenceAdoptionSuspendsTheOtherColour(t *testing.T) {
	s := newSim(t, false)
	s.p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	s.boot()
	s.commit(rev("b"), "img:B", "")
	s.run(3) // green B waiting for promotion
	s.commit(rev("c"), "img:A", "")
	s.run(3) // green re-applied with C (spec == blue)
	s.dump()
	s.p.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{}
	s.run(2)
	s.dump()
	if g := s.kids[bluegreen.Green]; g == nil || !g.Spec.Suspended() {
		t.Fatalf("expected adopt to suspend green")
	}
	s.actions = nil
	s.retryNow()
	s.run(1)
	s.dump()
	if s.kids[bluegreen.Green] == nil {
		t.Logf("FINDING: green, suspended by adopt (not by an abort), deleted by noChange: %v", s.actions)
	}
}

// A revision that went live keeps its success when its child is deleted by
// hand, the job stays FAILING with it as the target, and later commits push
// its record out of status.commitStatuses.
func TestRolloutSequenceLiveRevisionKeepsItsSuccessAfterItsRecordAgesOut(t *testing.T) {
	s := newSim(t, true)
	s.boot()
	s.commit(rev("b"), "img:B", "")
	s.run(6)
	if s.latest(rev("b")).State != StateSuccess {
		s.dump()
		t.Fatal("B did not go live")
	}
	for c, k := range s.kids {
		if k.Name == s.p.Status.ActiveDeployment {
			delete(s.kids, c) // by hand
		}
	}
	s.run(2)
	if s.p.Status.JobStatus.State != v1alpha1.JobFailing {
		s.dump()
		t.Fatalf("job state %s after the active child was deleted, want FAILING", s.p.Status.JobStatus.State)
	}
	for i, c := range "cdefghijkl" {
		s.p.Annotations[v1alpha1.RevisionAnnotation] = rev(string(c)) // a commit that changes other objects
		s.run(2)
		if e := s.latest(rev("b")); e.State != StateSuccess {
			s.dump()
			t.Fatalf("after %d later commits, B (live) shows %s %q: %s", i+1, e.State, e.Description, s.history(rev("b")))
		}
	}
}
