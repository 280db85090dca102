/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// mEvent is one thing that can happen next in the model. do reports
// whether it applied (false: nothing changed, the explorer skips it) and a
// violation of an invariant, if any.
type mEvent struct {
	name string
	do   func(m *model) (bool, error)
}

// The adapter's reconciles, with and without a crash.
var controllerEvents = []mEvent{
	{"reconcile", func(m *model) (bool, error) { return m.reconcile(func(int, bool) int { return -1 }) }},
	// The process dies (or the status write fails) after every action.
	{"reconcile, status write lost", func(m *model) (bool, error) {
		return m.reconcile(func(n int, first bool) int {
			if first {
				return -2 // its status went first: as "reconcile"
			}
			return n
		})
	}},
	// The process dies after the first of several actions.
	{"reconcile, crash after 1st action", func(m *model) (bool, error) {
		return m.reconcile(func(n int, _ bool) int {
			if n < 2 {
				return -2
			}
			return 1
		})
	}},
	// The process dies after writing a status that goes first, before
	// any of its actions.
	{"reconcile, crash after the status write", func(m *model) (bool, error) {
		return m.reconcile(func(n int, first bool) int {
			if !first {
				return -2
			}
			return 0
		})
	}},
	// A second replica: a decision taken from one status whose requests
	// land later (a paused or partitioned ex-leader, a request held in
	// the network), before or after its status that goes first.
	{"a replica decides, then stalls", func(m *model) (bool, error) { return m.stall(false, 0) }},
	{"a replica writes its status, then stalls", func(m *model) (bool, error) { return m.stall(true, 0) }},
	{"a replica whose clock runs ahead writes its status, then stalls", func(m *model) (bool, error) { return m.stall(true, mSkew) }},
	{"the stalled replica's requests land", (*model).release},
	{"API errors that last (toggle)", func(m *model) (bool, error) { m.Failing = !m.Failing; return true, nil }},
}

// systemEvents are the faults of the system around one decider, which
// TestExploreTheSystem adds to the search.
var systemEvents = map[string]bool{
	"a replica decides, then stalls": true, "a replica writes its status, then stalls": true,
	"a replica whose clock runs ahead writes its status, then stalls": true,
	"the stalled replica's requests land":                             true, "API errors that last (toggle)": true,
}

func perChild(name string, f func(m *model, x *mChild) bool) []mEvent {
	var out []mEvent
	for _, c := range []Color{Blue, Green} {
		c := c
		out = append(out, mEvent{name + " " + string(c), func(m *model) (bool, error) {
			x := m.C[c]
			return x != nil && f(m, x), nil
		}})
	}
	return out
}

// The Flink operator and the jobs.
var operatorEvents = concat(
	perChild("operator acts on the spec of", (*model).operatorObserve),
	// The job the operator deployed comes up, whether or not a newer spec
	// waits for the operator (its status then keeps the old generation).
	perChild("job becomes ready:", func(m *model, x *mChild) bool {
		if x.Deleting || x.Run == "" || x.Job != "RECONCILING" {
			return false
		}
		x.Lifecycle, x.Job = LifecycleStable, JobRunning
		return true
	}),
	perChild("job crashes:", func(m *model, x *mChild) bool {
		if x.Deleting || x.Job != JobRunning {
			return false
		}
		x.Lifecycle, x.Job = "FAILED", "FAILED"
		return true
	}),
	perChild("job restarts from its checkpoint:", func(m *model, x *mChild) bool {
		if x.Deleting || x.Job != "FAILED" {
			return false
		}
		x.Lifecycle, x.Job = "DEPLOYED", "RECONCILING"
		return true
	}),
	perChild("deletion completes:", func(m *model, x *mChild) bool {
		if !x.Deleting {
			return false
		}
		delete(m.C, x.Color)
		return true
	}),
	[]mEvent{
		{"savepoint completes", func(m *model) (bool, error) { return m.snapshotDone(true), nil }},
		{"savepoint fails", func(m *model) (bool, error) { return m.snapshotDone(false), nil }},
	},
)

// operatorObserve is the Flink operator acting on a new spec: suspend, a
// first deployment (from initialSavepointPath), or an upgrade that keeps
// the job's own state (stateful) or drops it (stateless).
func (m *model) operatorObserve(x *mChild) bool {
	if x.Deleting || x.ObsGen >= x.Gen {
		return false
	}
	x.ObsGen = x.Gen
	stateful := x.Spec.Stateful()
	if x.Run != "" {
		// A stateful stop keeps the job's state in a savepoint; a
		// stateless one drops it, by the spec's choice.
		x.Upgrade, x.Dropped = x.Run, !stateful
	}
	if x.Spec.Suspended() {
		x.Run, x.Lifecycle, x.Job = "", LifecycleSuspended, "SUSPENDED"
		return true
	}
	run := mRun{}
	nonce, newNonce := int64(0), false
	if n := x.Spec.Job.SavepointRedeployNonce; n != nil {
		nonce, newNonce = *n, *n != x.Nonce
	}
	x.Nonce = nonce
	switch {
	case x.Deployed && newNonce:
		// A new savepointRedeployNonce redeploys from initialSavepointPath.
		run.From, run.Chosen = m.token(x.Spec.Job.InitialSavepointPath), true
		x.Upgrade = run.From
	case !x.Deployed:
		if p := x.Spec.Job.InitialSavepointPath; p != "" {
			run.From = m.token(p)
		}
		x.Deployed, x.Upgrade, x.FirstPath = true, run.From, x.Spec.Job.InitialSavepointPath
		run.Chosen = x.Spec.Job.SavepointRedeployNonce != nil
	case stateful:
		run = mRun{From: x.Upgrade, Cont: true, Chosen: x.Dropped}
	default:
		run.Chosen = true
	}
	id := m.next("run")
	m.Runs[id] = run
	x.Run, x.Lifecycle, x.Job = id, "DEPLOYED", "RECONCILING"
	return true
}

// snapshotDone settles the pending snapshot asked for first (the name
// breaks a tie; a deletion's final savepoint may be asked for while a
// transition's is taken), not one picked by map order: the search is
// then the same at every run, a trail replays as it ran, and the state
// graph's golden (state_graph_test.go) is stable.
func (m *model) snapshotDone(ok bool) bool {
	name := ""
	for n, s := range m.Snaps {
		if s.State != SnapshotTriggerPending {
			continue
		}
		if p := m.Snaps[name]; name == "" || s.At.Before(p.At) || s.At.Equal(p.At) && n < name {
			name = n
		}
	}
	if name == "" {
		return false
	}
	s := m.Snaps[name]
	var job *mChild
	for _, c := range m.C {
		if c.Name == s.Job && !c.Deleting && c.Job == JobRunning {
			job = c
		}
	}
	if !ok || job == nil {
		s.State = SnapshotFailed
		return true
	}
	s.State, s.Path = SnapshotCompleted, "file:/sp/"+name
	m.Paths["/sp/"+name] = job.Run
	return true
}

// The clock: a sub-second tick, and a jump just past the next deadline.
var clockEvents = []mEvent{
	{"clock +700ms", func(m *model) (bool, error) { m.Now = m.Now.Add(700 * time.Millisecond); return true, nil }},
	{"clock past the next deadline", func(m *model) (bool, error) {
		next := m.nextDeadline()
		if next.IsZero() {
			return false, nil
		}
		m.Now = next.Add(time.Millisecond)
		return true, nil
	}},
}

func (m *model) nextDeadline() time.Time {
	st := &m.P.Status
	var out time.Time
	consider := func(t time.Time) {
		if t.After(m.Now) && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	if st.AbortTimestamp != nil {
		consider(st.AbortTimestamp.Time)
	}
	if st.DeploymentReadyTimestamp != nil {
		consider(st.DeploymentReadyTimestamp.Add(mDelay))
	}
	if st.BlueGreenState.Savepointing() && st.Savepoint != nil && st.Savepoint.TriggerTimestamp != nil {
		consider(st.Savepoint.TriggerTimestamp.Add(mSpTime + time.Second))
	}
	// The model's own bounds (checkTimers), in case the status lost its.
	t := &m.T
	for _, at := range []struct {
		since time.Time
		bound time.Duration
	}{{t.SpAt, mSpTime}, {t.TStart, mGrace}, {t.ReadyAt, mDelay}} {
		if !at.since.IsZero() {
			consider(at.since.Add(at.bound + mRound))
		}
	}
	return out
}

// edit is a new commit: a spec change with a new revision.
func edit(name string, f func(s *v1alpha1.FlinkDeploymentSpec)) mEvent {
	return editParent(name, func(p *v1alpha1.FlinkBlueGreenDeploymentSpec) { f(&p.Template.Spec) })
}

// editParent is a new commit that may change the parent's own fields.
func editParent(name string, f func(s *v1alpha1.FlinkBlueGreenDeploymentSpec)) mEvent {
	return mEvent{name, func(m *model) (bool, error) {
		if m.Gone {
			return false, nil
		}
		f(&m.P.Spec)
		m.P.Generation++
		m.P.Annotations[v1alpha1.RevisionAnnotation] = m.next("r")
		m.userChange()
		return true, nil
	}}
}

// userChange: a commit may change the template's initialSavepointPath.
func (m *model) userChange() {
	m.notePath()
	m.gitChoosesFirstPath()
}

func request(key string) mEvent {
	return mEvent{"request " + key, func(m *model) (bool, error) {
		if m.Gone {
			return false, nil
		}
		m.P.Annotations[key] = m.next("at")
		if key == v1alpha1.PromoteRequestedAtAnnotation {
			m.T.Promote = m.Now
		}
		return true, nil
	}}
}

// Users and other hands.
var userEvents = concat([]mEvent{
	// Each new image differs from the last (flink:7, flink:8, flink:7, …).
	edit("commit: new image", func(s *v1alpha1.FlinkDeploymentSpec) {
		if s.Image == "flink:7" {
			s.Image = "flink:8"
		} else {
			s.Image = "flink:7"
		}
	}),
	edit("commit: parallelism.default (in place)", func(s *v1alpha1.FlinkDeploymentSpec) {
		s.FlinkConfiguration = rawJSON(fmt.Sprintf(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp",`+
			`"parallelism.default":"%d"}`, len(s.FlinkConfiguration.Raw)))
	}),
	edit("commit: suspend", func(s *v1alpha1.FlinkDeploymentSpec) { s.Job.State = v1alpha1.JobStateSuspended }),
	edit("commit: resume", func(s *v1alpha1.FlinkDeploymentSpec) { s.Job.State = v1alpha1.JobStateRunning }),
	edit("commit: upgradeMode savepoint<->stateless", func(s *v1alpha1.FlinkDeploymentSpec) {
		if s.Job.UpgradeMode == v1alpha1.UpgradeModeStateless {
			s.Job.UpgradeMode = v1alpha1.UpgradeModeSavepoint
		} else {
			s.Job.UpgradeMode = v1alpha1.UpgradeModeStateless
		}
	}),
	edit("commit: savepointRedeployNonce", func(s *v1alpha1.FlinkDeploymentSpec) {
		n := int64(1)
		if s.Job.SavepointRedeployNonce != nil {
			n = *s.Job.SavepointRedeployNonce + 1
		}
		s.Job.SavepointRedeployNonce = &n
	}),
	edit("commit: redeploy from another savepoint", func(s *v1alpha1.FlinkDeploymentSpec) {
		n := int64(1)
		if s.Job.SavepointRedeployNonce != nil {
			n = *s.Job.SavepointRedeployNonce + 1
		}
		s.Job.SavepointRedeployNonce, s.Job.InitialSavepointPath = &n, fmt.Sprintf("/user/chosen-%d", n)
	}),
	edit("commit: resume from another savepoint", func(s *v1alpha1.FlinkDeploymentSpec) {
		n := int64(1)
		if s.Job.SavepointRedeployNonce != nil {
			n = *s.Job.SavepointRedeployNonce + 1
		}
		s.Job.State = v1alpha1.JobStateRunning
		s.Job.SavepointRedeployNonce, s.Job.InitialSavepointPath = &n, fmt.Sprintf("/user/chosen-%d", n)
	}),
	edit("commit: initialSavepointPath (in place)", func(s *v1alpha1.FlinkDeploymentSpec) {
		s.Job.InitialSavepointPath = fmt.Sprintf("/user/other-%d", len(s.Job.InitialSavepointPath))
	}),
	editParent("commit: promotion mode Automatic<->Manual", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		if s.Promotion != nil && s.Promotion.Mode == v1alpha1.PromotionManual {
			s.Promotion = nil
		} else {
			s.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
		}
	}),
	editParent("commit: shorter/longer timers", func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		if s.Configuration[v1alpha1.DeploymentDeletionDelayKey] == "0" {
			s.Configuration[v1alpha1.DeploymentDeletionDelayKey] = "500 ms"
			s.Configuration[v1alpha1.AbortGracePeriodKey] = mGrace.String()
		} else {
			s.Configuration[v1alpha1.DeploymentDeletionDelayKey] = "0"
			s.Configuration[v1alpha1.AbortGracePeriodKey] = "4s"
		}
	}),
	edit("commit: a spec the cluster rejects", func(s *v1alpha1.FlinkDeploymentSpec) { s.Image = invalidImage }),
	request(v1alpha1.PromoteRequestedAtAnnotation),
	request(v1alpha1.AbortRequestedAtAnnotation),
	request(v1alpha1.RetryRequestedAtAnnotation),
	{"status wiped", func(m *model) (bool, error) {
		if m.Gone {
			return false, nil
		}
		m.P.Status = v1alpha1.FlinkBlueGreenDeploymentStatus{}
		m.T, m.RejKey = mTimers{}, ""
		m.AltHolder = m.stillRunningSource()
		return true, nil
	}},
	{"rollout window closes/opens (toggle)", func(m *model) (bool, error) {
		m.Closed, m.OpenSpec = !m.Closed, nil
		if m.Closed {
			m.OpenSpec = m.P.Spec.Template.Spec.DeepCopy()
		}
		return true, nil
	}},
	{"webhook denies savepoints (toggle)", func(m *model) (bool, error) { m.DenySnap = !m.DenySnap; return true, nil }},
	{"RBAC forbids deletes (toggle)", func(m *model) (bool, error) { m.DenyDel = !m.DenyDel; return true, nil }},
},
	perChild("deleted by hand:", func(m *model, x *mChild) bool {
		if x.Deleting {
			return false
		}
		x.Deleting = true
		if !m.stateSurvives() {
			m.Holder = "" // the user destroyed the state
			m.notePath()
		}
		return true
	}),
	perChild("scaled through the scale subresource:", func(m *model, x *mChild) bool {
		if x.Deleting {
			return false
		}
		tm := rawMap(x.Spec.TaskManager)
		tm["replicas"] = x.Gen + 2
		b, _ := json.Marshal(tm)
		x.Spec.TaskManager = rawJSON(string(b))
		x.Overridden = []string{"taskManager.replicas"}
		x.Gen++
		return true
	}),
)

// stillRunningSource is the run the holder was started from by a
// savepoint, when a child still runs it: a cut-over recorded but not yet
// made (its status went first). With the status wiped, nothing tells
// which of the two the record made active, and each has processed the
// same input since that savepoint: adopting either keeps the state.
func (m *model) stillRunningSource() string {
	h := m.Runs[m.Holder]
	if m.Holder == "" || h.Cont || strings.HasPrefix(h.From, "user:") || h.From == "" {
		return ""
	}
	for _, c := range m.C {
		if !c.Deleting && c.Run == h.From {
			return h.From
		}
	}
	return ""
}

// stateSurvives: a child not being deleted holds the latest state, or
// runs (or would restore) a job that carries it.
func (m *model) stateSurvives() bool {
	for _, c := range m.C {
		if !c.Deleting && (m.holds(c) || m.carries(c.Run) || m.carries(c.Upgrade)) {
			return true
		}
	}
	return false
}

func concat(lists ...[]mEvent) []mEvent {
	var out []mEvent
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func allEvents() []mEvent {
	return concat(controllerEvents, operatorEvents, clockEvents, userEvents, lifecycleEvents)
}
