/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// model is the world around Decide with every fault the real system has,
// for the explorer (explore_test.go):
//   - the API server: generations, rejected writes, deletions held by a
//     finalizer, a status that can be wiped;
//   - the Flink operator: it acts on a new spec some time after it was
//     written (status.observedGeneration lags metadata.generation), reads
//     initialSavepointPath only on a child's first deployment, restores an
//     upgraded or resumed job from its own state (upgradeSavepointPath),
//     and jobs crash and come back;
//   - the adapter: it runs a decision's actions in order and then writes
//     the status; the process can die, or the write be lost, anywhere in
//     between; a rejected action is decided again with Input.Rejection;
//   - users: every kind of spec edit, requests, deletion and scaling of
//     children by hand.
//
// State is tracked as job runs: every run records the run (or the user's
// savepoint) it restored from, so the model can tell whether a job carries
// the latest state.
type model struct {
	P      *v1alpha1.FlinkBlueGreenDeployment
	C      map[Color]*mChild
	Snaps  map[string]*mSnap
	Runs   map[string]mRun
	Paths  map[string]string // savepoint path → the run it captured
	Now    time.Time
	Seq    int
	Holder string // the run holding the latest state ("" before any)
	// Since is when the current transition started or was last changed by
	// a user (zero outside transitions): the liveness clock.
	Since    time.Time
	DenySnap bool   // an admission webhook denies FlinkStateSnapshots
	DenyDel  bool   // RBAC forbids deleting FlinkDeployments
	RejKey   string // the request whose rejection is recorded in status
}

type mChild struct {
	Name           string
	Color          Color
	Spec           v1alpha1.FlinkDeploymentSpec
	Revision       string
	Gen, ObsGen    int64
	Lifecycle, Job string
	Run            string // the current job run, "" when none
	Upgrade        string // what the operator restores from (upgradeSavepointPath)
	Deployed       bool   // the first deployment happened
	Nonce          int64  // the savepointRedeployNonce the operator last acted on
	FirstPath      string // the initialSavepointPath of its first deployment
	Dropped        bool   // the last stop was stateless: Upgrade holds no state
	Deleting       bool
	Created        int
}

type mRun struct {
	From string // the run or "user:<path>" it restored from; "" is empty state
	Cont bool   // it continues From on the same child (the job's own state)
	// Chosen: started without the latest state because the spec said so
	// (a stateless upgrade mode, or a savepoint redeploy).
	Chosen bool
}

type mSnap struct{ Job, State, Path string }

// Model timers: sub-second deletion delay, as in FLIP-503's own tests.
const (
	mGrace    = 10 * time.Second
	mInterval = time.Second
	mDelay    = 500 * time.Millisecond
	mSpTime   = 5 * time.Second
	// mBound is the longest a transition may last: savepoint timeout,
	// grace period, deletion delay, one reschedule, and the rounding of
	// three status timestamps to whole seconds.
	mBound = mSpTime + mGrace + mDelay + mInterval + 3*time.Second
)

const (
	userPath     = "/user/initial"
	invalidImage = "flink:invalid"
)

func newModel(mode string, manualPromotion bool) *model {
	spec := baseSpec(mode)
	spec.Configuration = map[string]string{
		v1alpha1.AbortGracePeriodKey:        mGrace.String(),
		v1alpha1.RescheduleIntervalKey:      mInterval.String(),
		v1alpha1.DeploymentDeletionDelayKey: "500 ms",
		v1alpha1.SavepointTimeoutKey:        mSpTime.String(),
	}
	spec.Template.Spec.Job.InitialSavepointPath = userPath
	if manualPromotion {
		spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	}
	p := &v1alpha1.FlinkBlueGreenDeployment{Spec: spec}
	p.Name, p.Namespace, p.Generation = "orders", "prod", 1
	p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: "r0"}
	return &model{P: p, C: map[Color]*mChild{}, Snaps: map[string]*mSnap{}, Runs: map[string]mRun{},
		Paths: map[string]string{}, Now: t0.Add(300 * time.Millisecond)}
}

func (m *model) clone() *model {
	n := *m
	n.P = m.P.DeepCopy()
	n.C = map[Color]*mChild{}
	for c, x := range m.C {
		y := *x
		y.Spec = *x.Spec.DeepCopy()
		n.C[c] = &y
	}
	n.Snaps = map[string]*mSnap{}
	for k, s := range m.Snaps {
		v := *s
		n.Snaps[k] = &v
	}
	n.Runs = make(map[string]mRun, len(m.Runs))
	for k, v := range m.Runs {
		n.Runs[k] = v
	}
	n.Paths = make(map[string]string, len(m.Paths))
	for k, v := range m.Paths {
		n.Paths[k] = v
	}
	return &n
}

// key identifies a state for the explorer's visited set. Of
// status.history it keeps only whether a rollout is under way: Decide
// reads nothing else of it (see history.go), and the times in finished
// entries would otherwise tell apart states that behave alike.
func (m *model) key() uint64 {
	st := *m.P.Status.DeepCopy()
	hist := st.History
	st.History = nil
	underWay := len(hist) > 0 && hist[len(hist)-1].Outcome == v1alpha1.RolloutInProgress
	b, _ := json.Marshal(struct {
		S    v1alpha1.FlinkBlueGreenDeploymentStatus
		G    int64
		A    map[string]string
		M    string
		C    map[Color]*mChild
		N    map[string]*mSnap
		R, T int
		H    string
		D, E bool
		K    string
		W    time.Time
		U    bool
	}{st, m.P.Generation, m.P.Annotations, m.P.Spec.Template.Spec.UpgradeModeOrDefault() + m.P.Spec.Template.Spec.JobStateOrDefault() + m.P.Spec.Template.Spec.Image,
		m.C, m.Snaps, len(m.Runs), int(m.Now.Sub(t0) / time.Millisecond), m.Holder, m.DenySnap, m.DenyDel, m.RejKey, m.Since, underWay})
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

func (m *model) next(prefix string) string {
	m.Seq++
	return fmt.Sprintf("%s%d", prefix, m.Seq)
}

// input is what the adapter observes.
func (m *model) input() Input {
	in := Input{Parent: m.P.DeepCopy(), Window: Window{Open: true}, Now: m.Now}
	in.Blue, in.Green = m.observed(Blue), m.observed(Green)
	if sp := m.P.Status.Savepoint; sp != nil && m.Snaps[sp.Name] != nil {
		s := m.Snaps[sp.Name]
		in.Snapshot = &Snapshot{Name: sp.Name, State: s.State, Path: s.Path}
	}
	return in
}

func (m *model) observed(c Color) *Child {
	x := m.C[c]
	if x == nil {
		return nil
	}
	return &Child{Name: x.Name, Color: c, Spec: *x.Spec.DeepCopy(), Revision: x.Revision, LifecycleState: x.Lifecycle,
		JobState: x.Job, JobID: x.Run, Deleting: x.Deleting, Generation: x.Gen, ObservedGeneration: x.ObsGen,
		Created: t0.Add(time.Duration(x.Created) * time.Second)}
}

// reconcile is one reconcile of the adapter. crash(n) tells after how many
// of the decision's n actions the process dies (n: after all of them,
// before the status write; -1: it does not).
func (m *model) reconcile(crash func(n int) int) error {
	in := m.input()
	d, err := Decide(in)
	if err != nil {
		return fmt.Errorf("Decide: %v", err)
	}
	if err := m.checkDecision(in, d); err != nil {
		return err
	}
	stop := crash(len(d.Actions))
	for i, a := range d.Actions {
		if i == stop {
			return nil
		}
		if msg := m.rejects(a); msg != "" {
			return m.rejected(a, msg)
		}
		if err := m.act(a); err != nil {
			return err
		}
	}
	if stop == len(d.Actions) {
		return nil
	}
	return m.write(in, d)
}

// rejected is the adapter's answer to a rejected action: observe again and
// decide with the rejection.
func (m *model) rejected(a Action, msg string) error {
	key := m.requestKey()
	if m.RejKey == key {
		return fmt.Errorf("rejected %s attempted again without a new commit or retry", a.Type)
	}
	in := m.input()
	in.Rejection = &Rejection{Action: a, Message: msg}
	d, err := Decide(in)
	if err != nil {
		return fmt.Errorf("Decide: %v", err)
	}
	if err := m.checkDecision(in, d); err != nil {
		return err
	}
	for _, b := range d.Actions {
		if m.rejects(b) != "" {
			if reflect.DeepEqual(b, a) {
				return fmt.Errorf("the decision on a rejection makes the rejected request again: %s", describeActions([]Action{b}))
			}
			return nil // the adapter marks the parent Stalled and retries later
		}
		if err := m.act(b); err != nil {
			return err
		}
	}
	if err := m.write(in, d); err != nil {
		return err
	}
	m.RejKey = key
	return nil
}

// requestKey changes with every new commit and retry request.
func (m *model) requestKey() string {
	return fmt.Sprint(m.P.Generation, "/", m.P.Annotations[v1alpha1.RetryRequestedAtAnnotation])
}

// rejects is the API server's and the admission webhooks' verdict.
func (m *model) rejects(a Action) string {
	switch {
	case a.Type == ApplyChild && a.Child.Spec.Image == invalidImage:
		return `FlinkDeployment.flink.apache.org "` + a.Child.Name + `" is invalid: spec.image: Invalid value`
	case a.Type == CreateSnapshot && m.DenySnap:
		return `admission webhook "validationwebhook.flink.apache.org" denied the request`
	case a.Type == DeleteChild && m.DenyDel:
		return `flinkdeployments.flink.apache.org "` + a.ChildName + `" is forbidden: cannot delete`
	}
	return ""
}

func (m *model) act(a Action) error {
	switch a.Type {
	case ApplyChild:
		return m.applyChild(a.Child)
	case DeleteChild:
		return m.deleteChild(a.ChildName)
	case CreateSnapshot:
		if m.Snaps[a.Snapshot.Name] == nil {
			m.Snaps[a.Snapshot.Name] = &mSnap{Job: a.Snapshot.JobName, State: SnapshotTriggerPending}
		}
	}
	return nil
}

func (m *model) applyChild(cs *ChildSpec) error {
	x := m.C[cs.Color]
	if x != nil && x.Deleting {
		return fmt.Errorf("apply to %s while it is being deleted", cs.Name)
	}
	if err := m.checkSuspend(cs); err != nil {
		return err
	}
	if x == nil {
		x = &mChild{Name: cs.Name, Color: cs.Color, Created: m.Seq}
		m.Seq++
		m.C[cs.Color] = x
	}
	if x.Gen == 0 || !equalSpec(&x.Spec, &cs.Spec) {
		x.Gen++
	}
	x.Spec, x.Revision = *cs.Spec.DeepCopy(), cs.Revision
	return nil
}

// checkSuspend: the job holding the latest state is suspended only when
// the user asks, or when another job that carries that state runs.
func (m *model) checkSuspend(cs *ChildSpec) error {
	x := m.C[cs.Color]
	if x == nil || !cs.Spec.Suspended() || x.Spec.Suspended() {
		return nil
	}
	if m.P.Spec.Template.Spec.Suspended() || !m.holds(x) {
		return nil
	}
	if o := m.C[cs.Color.Other()]; o != nil && m.ready(o) && m.carries(o.Run) {
		return nil
	}
	return fmt.Errorf("%s, which holds the latest state, suspended while no other job carrying it runs", cs.Name)
}

// deleteChild: never delete the job holding the latest state unless the
// other colour runs its current spec and was started from that state (or
// the user chose a start without it).
func (m *model) deleteChild(name string) error {
	var x *mChild
	for _, c := range m.C {
		if c.Name == name {
			x = c
		}
	}
	if x == nil || x.Deleting {
		return nil
	}
	if m.holds(x) {
		o := m.C[x.Color.Other()]
		switch {
		case o == nil || !m.ready(o):
			return fmt.Errorf("%s, which holds the latest state, deleted while the other colour does not run its current spec", name)
		case !m.carries(o.Run) && !m.exempt(o.Run):
			return fmt.Errorf("%s, which holds the latest state, deleted while %s's job was not started from it", name, o.Name)
		}
	}
	x.Deleting = true
	return nil
}

// ready is the truth the controller may only approximate.
func (m *model) ready(x *mChild) bool {
	return !x.Deleting && x.ObsGen == x.Gen && x.Lifecycle == LifecycleStable && x.Job == JobRunning &&
		!x.Spec.Suspended()
}

// line is the holder's run and the runs it continues on its own child.
func (m *model) line() map[string]bool {
	out := map[string]bool{}
	for h := m.Holder; h != ""; h = m.Runs[h].From {
		out[h] = true
		if !m.Runs[h].Cont {
			break
		}
	}
	return out
}

// carries reports whether run r was started, directly or through other
// runs, from the state of the holder's line.
func (m *model) carries(r string) bool { return m.reachesLine(r, false) }

// holds reports whether child x has the latest state, in its job or in the
// savepoint it would restore from: its own state continues the holder's
// (a copy started from a savepoint of it does not count).
func (m *model) holds(x *mChild) bool {
	r := x.Run
	if r == "" {
		r = x.Upgrade
	}
	return m.reachesLine(r, true)
}

// reachesLine walks the runs r restored from, back to the holder's line;
// ownOnly stops at the first run started from another job's savepoint.
func (m *model) reachesLine(r string, ownOnly bool) bool {
	if m.Holder == "" || r == "" {
		return false
	}
	line := m.line()
	for a, n := r, 0; a != "" && n < 100; a, n = m.Runs[a].From, n+1 {
		if line[a] {
			return true
		}
		if ownOnly && !m.Runs[a].Cont {
			return false
		}
	}
	return false
}

// exempt: the user chose a start without the latest state (a stateless
// upgrade mode, or a savepoint redeploy from their own path).
func (m *model) exempt(r string) bool {
	tpl := &m.P.Spec.Template.Spec
	if !tpl.Stateful() {
		return true
	}
	for a, n := r, 0; a != "" && n < 100; a, n = m.Runs[a].From, n+1 {
		if m.Runs[a].Chosen || a == "user:"+tpl.Job.InitialSavepointPath && tpl.Job.SavepointRedeployNonce != nil {
			return true
		}
	}
	return false
}

// write is the status write; the invariants on the written status follow.
func (m *model) write(in Input, d Decision) error {
	m.P.Status = *d.Status.DeepCopy()
	if err := m.checkTruth(); err != nil {
		return err
	}
	if err := m.checkLineage(); err != nil {
		return err
	}
	if err := checkBookkeeping(&m.P.Status); err != nil {
		return err
	}
	if err := checkHistory(&in.Parent.Status, &m.P.Status); err != nil {
		return err
	}
	if err := checkSavepointRecorded(m.P.Status.History, m.completedAt); err != nil {
		return err
	}
	return m.checkLiveness()
}

// completedAt is the path of the completed snapshot name.
func (m *model) completedAt(name string) (string, bool) {
	s := m.Snaps[name]
	if s == nil || s.State != SnapshotCompleted {
		return "", false
	}
	return strings.TrimPrefix(s.Path, "file:"), true
}

// checkBookkeeping: the status fields agree with the state. A transition
// is RECONCILING with an abort deadline; outside transitions there are no
// deadlines; an active or savepointing colour is the active deployment,
// and nothing is while initializing; conditions are sorted, with reasons.
// Many code paths set these fields again on top of each other; mutation
// testing (docs/mutation.md) counts those as equivalent because of this
// invariant.
func checkBookkeeping(st *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	s := st.BlueGreenState
	switch {
	case s == "":
		return nil // wiped, not yet reconciled
	case s.Transitioning():
		if st.JobStatus.State != v1alpha1.JobReconciling || st.AbortTimestamp == nil {
			return fmt.Errorf("%s with job %s and abort deadline %v", s, st.JobStatus.State, st.AbortTimestamp)
		}
	case st.AbortTimestamp != nil || st.DeploymentReadyTimestamp != nil:
		return fmt.Errorf("%s with abort deadline %v and ready timestamp %v", s, st.AbortTimestamp, st.DeploymentReadyTimestamp)
	}
	want := ""
	switch s {
	case v1alpha1.ActiveBlue, v1alpha1.SavepointingBlue:
		want = "-blue"
	case v1alpha1.ActiveGreen, v1alpha1.SavepointingGreen:
		want = "-green"
	}
	if (s == v1alpha1.InitializingBlue && st.ActiveDeployment != "") || !strings.HasSuffix(st.ActiveDeployment, want) {
		return fmt.Errorf("%s with activeDeployment %q", s, st.ActiveDeployment)
	}
	for i, c := range st.Conditions {
		if c.Reason == "" || i > 0 && st.Conditions[i-1].Type >= c.Type {
			return fmt.Errorf("conditions unsorted or without a reason: %+v", st.Conditions)
		}
	}
	return nil
}

// checkTruth: ACTIVE_X with job RUNNING means X runs its current spec.
func (m *model) checkTruth() error {
	st := &m.P.Status
	if !st.BlueGreenState.Active() {
		return nil
	}
	x := m.C[m.colorOfName(st.ActiveDeployment)]
	switch st.JobStatus.State {
	case v1alpha1.JobRunning:
		if x == nil || !m.ready(x) {
			return fmt.Errorf("status %s/RUNNING but %s does not run its current spec (%s)", st.BlueGreenState, st.ActiveDeployment, m.describe())
		}
	case v1alpha1.JobSuspended:
		if x == nil || !x.Spec.Suspended() {
			return fmt.Errorf("status %s/SUSPENDED but %s is not suspended", st.BlueGreenState, st.ActiveDeployment)
		}
	}
	return nil
}

func (m *model) colorOfName(name string) Color {
	if strings.HasSuffix(name, "-green") {
		return Green
	}
	return Blue
}

// checkLineage: the job the status makes active carries the latest state;
// the first one starts from the initialSavepointPath it was given.
func (m *model) checkLineage() error {
	st := &m.P.Status
	x := m.C[m.colorOfName(st.ActiveDeployment)]
	if st.ActiveDeployment == "" || x == nil || x.Deleting || x.Run == "" || x.Run == m.Holder {
		return nil
	}
	switch {
	case m.Holder == "":
		if p := x.FirstPath; p != "" && !m.exempt(x.Run) && !m.descends(x.Run, m.token(p)) {
			return fmt.Errorf("first active job %s did not start from initialSavepointPath %s", x.Name, p)
		}
	case !m.carries(x.Run) && !m.exempt(x.Run):
		return fmt.Errorf("%s made active, but its job (from %q) does not carry the latest state (%s)", x.Name, m.Runs[x.Run].From, m.Holder)
	}
	m.Holder = x.Run
	return nil
}

func (m *model) descends(r, from string) bool {
	for a, n := r, 0; a != "" && n < 100; a, n = m.Runs[a].From, n+1 {
		if a == from {
			return true
		}
	}
	return false
}

// token is the state a savepoint path holds.
func (m *model) token(path string) string {
	if r, ok := m.Paths[path]; ok {
		return r
	}
	return "user:" + path
}

// checkLiveness: every transition ends within mBound of its start or of
// the last user change, whatever the children do; a transition waiting
// for a person to promote it is not bounded.
func (m *model) checkLiveness() error {
	st := &m.P.Status
	if !st.BlueGreenState.InProgress() {
		m.Since = time.Time{}
		return nil
	}
	promotePending := m.P.Annotations[v1alpha1.PromoteRequestedAtAnnotation] != st.LastHandledPromoteAt
	if c := findCondition(st.Conditions, v1alpha1.ReconcilingCondition); c != nil && c.Reason == "WaitingForPromotion" && !promotePending {
		m.Since = time.Time{}
		return nil
	}
	if m.Since.IsZero() {
		m.Since = m.Now
	}
	if m.Now.Sub(m.Since) > mBound {
		return fmt.Errorf("transition still in %s %s after it started, longer than %s", st.BlueGreenState, m.Now.Sub(m.Since), mBound)
	}
	return nil
}

// checkDecision: every failure is visible (a Warning event, Ready False
// with a reason), and at most one child per colour is asked for.
func (m *model) checkDecision(in Input, d Decision) error {
	st, prev := &d.Status, &in.Parent.Status
	if st.JobStatus.State == v1alpha1.JobFailing && st.Error != prev.Error {
		warned := false
		for _, e := range d.Events {
			warned = warned || e.Warning
		}
		if !warned {
			return fmt.Errorf("new failure %q without a Warning event", st.Error)
		}
	}
	if st.JobStatus.State == v1alpha1.JobFailing {
		if c := findCondition(st.Conditions, v1alpha1.ReadyCondition); c == nil || c.Status != "False" || c.Reason == "" || st.Error == "" {
			return fmt.Errorf("FAILING without Ready=False, a reason and an error")
		}
	}
	if d.RequeueAfter < 0 {
		return fmt.Errorf("negative requeue %s", d.RequeueAfter)
	}
	return checkHistoryApplies(d)
}

func (m *model) describe() string {
	var s []string
	for _, c := range []Color{Blue, Green} {
		if x := m.C[c]; x != nil {
			s = append(s, fmt.Sprintf("%s{%s gen %d/%d %s/%s run=%s up=%s del=%v}", x.Name, x.Spec.JobStateOrDefault(), x.ObsGen, x.Gen,
				x.Lifecycle, x.Job, x.Run, x.Upgrade, x.Deleting))
		}
	}
	st := m.P.Status
	return fmt.Sprintf("%s/%s active=%q holder=%s children=[%s]", st.BlueGreenState, st.JobStatus.State, st.ActiveDeployment,
		m.Holder, strings.Join(s, " "))
}
