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
	"slices"
	"strings"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
	// PathsSeen are the initialSavepointPath values the template had while
	// no job held state: the first job must start from one of them.
	PathsSeen map[string]bool
	DenySnap  bool // an admission webhook denies FlinkStateSnapshots
	// Stalling is set while a stalled replica's status write is checked:
	// that replica has not seen the failures of this one, and its write
	// is no reconcile the timers are owed by (the next one is).
	Stalling bool
	DenyDel  bool   // RBAC forbids deleting FlinkDeployments
	RejKey   string // the request whose rejection is recorded in status
	Closed   bool   // the rollout window is closed
	// OpenSpec is the template as it was when the window closed.
	OpenSpec *v1alpha1.FlinkDeploymentSpec
	T        mTimers
	Failing  bool   // every request for a child or a savepoint fails with an error retrying may fix
	Held     *mHeld // a stalled replica's decision, its requests still to land
	// AltHolder may be adopted in place of Holder after a wiped status
	// (see stillRunningSource).
	AltHolder string
	// LastFailed is the state a request failed on, as the adapter
	// remembers it ("" when none).
	LastFailed string
	FailedAct  *Action
	// Gone: the object was deleted (its finalizer removed); only a
	// re-creation from Git brings it back (model_lifecycle_test.go).
	Gone      bool
	Fresh     bool             // re-created, none of its jobs made active yet
	seen      map[Color]mChild // the children as the reconcile under way observed them
	decidedAt time.Time        // when the requests landing now were decided, if not now
	// wrote are the status writes of the event being applied, for the
	// explorer's state graph (state_graph_test.go); it clears them.
	wrote []mWrite
}

// mWrite is one status write: the state it left, the decision written.
type mWrite struct {
	From v1alpha1.BlueGreenState
	D    Decision
}

// snapshot copies the children as they are now.
func (m *model) snapshot() map[Color]mChild {
	out := make(map[Color]mChild, len(m.C))
	for c, x := range m.C {
		out[c] = *x
	}
	return out
}

// mTimers are the model's own clocks of the rollout under way, started
// from what the model saw happen (status writes, commits, requests), never
// read back from the deadlines the status records: each timer is checked
// against its own bound (checkTimers).
type mTimers struct {
	SpName   string    // the savepoint being taken
	SpAt     time.Time // when it was asked for
	TStart   time.Time // when the abort grace period began (or a new target revision restarted it)
	ReadyAt  time.Time // since when the target has run its spec, seen at status writes
	WasReady bool
	Flapped  bool      // Manual mode: the target stopped being ready
	Promote  time.Time // when the last promotion was requested
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
	Foreign        bool // an earlier object's, met by a re-created one
	// Git is the spec bg-gitops last applied: what Git set. Spec differs
	// in the fields of Overridden, which another field manager set since
	// (the scale subresource).
	Git        v1alpha1.FlinkDeploymentSpec
	Overridden []string
	// Unowned: owned by nothing, left running by a deletion that
	// orphaned it (model_lifecycle_test.go).
	Unowned bool
}

type mRun struct {
	From string // the run or "user:<path>" it restored from; "" is empty state
	Cont bool   // it continues From on the same child (the job's own state)
	// Chosen: started without the latest state because the spec said so
	// (a stateless upgrade mode, or a savepoint redeploy).
	Chosen bool
}

type mSnap struct {
	Job, State, Path string
	At               time.Time // when it was asked for
	// Started is the image of the first new colour created from it.
	Started string
	// Record: a deletion's record of the state of Of (not owned by it);
	// LastCompleted and Existing as RecordSpec's.
	Record        bool
	Of            string
	LastCompleted string
	Existing      bool
}

// Model timers: sub-second deletion delay, as in FLIP-503's own tests.
const (
	mGrace    = 10 * time.Second
	mInterval = time.Second
	mDelay    = 500 * time.Millisecond
	mSpTime   = 5 * time.Second
	// mSkew is how far ahead of the model's clock a second replica's may
	// run (NTP keeps nodes within tens of milliseconds; this is far more).
	mSkew = 500 * time.Millisecond
	// mRound is how much later than its nominal bound a timer may fire:
	// deadlines are rounded up to the whole second the API server keeps.
	mRound = time.Second
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
	m := &model{P: p, C: map[Color]*mChild{}, Snaps: map[string]*mSnap{}, Runs: map[string]mRun{},
		Paths: map[string]string{}, PathsSeen: map[string]bool{}, Now: t0.Add(300 * time.Millisecond)}
	m.notePath()
	return m
}

// notePath records the template's initialSavepointPath while no job holds
// state: a first job may start from it.
func (m *model) notePath() {
	if m.Holder == "" {
		m.PathsSeen[m.P.Spec.Template.Spec.Job.InitialSavepointPath] = true
	}
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
	n.PathsSeen = make(map[string]bool, len(m.PathsSeen))
	for k, v := range m.PathsSeen {
		n.PathsSeen[k] = v
	}
	return &n
}

// key identifies a state for the explorer's visited set. Of
// status.history it keeps only whether a rollout is under way: Decide
// reads nothing else of it (see history.go), and the times in finished
// entries would otherwise tell apart states that behave alike. The
// lineage (every run and what it restored from, every savepoint and the
// run it captured) is part of the key: two states with the same objects
// but different histories of state are different states.
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
		R    map[string]mRun
		P    map[string]string
		PS   map[string]bool
		T    int
		H    string
		D, E bool
		K    string
		W    mTimers
		U, X bool
		F    bool
		HD   *mHeld
		AH   string
		LF   string
		FA   *Action
		O    string
	}{st, m.P.Generation, m.P.Annotations, m.P.Spec.Template.Spec.UpgradeModeOrDefault() + m.P.Spec.Template.Spec.JobStateOrDefault() + m.P.Spec.Template.Spec.Image,
		m.C, m.Snaps, m.Runs, m.Paths, m.PathsSeen, int(m.Now.Sub(t0) / time.Millisecond), m.Holder, m.DenySnap, m.DenyDel, m.RejKey,
		m.T, underWay, m.Closed, m.Failing, m.Held, m.AltHolder, m.LastFailed, m.FailedAct,
		fmt.Sprint(openImage(m.OpenSpec), m.Gone, m.Fresh, m.P.Name, m.P.DeletionTimestamp, m.P.Finalizers, m.P.Spec.Template.Spec.Job.JarURI)})
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
	if m.Closed {
		in.Window = Window{OpensAt: m.Now.Add(time.Hour), Description: "outside the rollout window"}
	}
	in.Blue, in.Green = m.observed(Blue), m.observed(Green)
	m.observeRecord(&in)
	if sp := m.P.Status.Savepoint; sp != nil && m.Snaps[sp.Name] != nil {
		s := m.Snaps[sp.Name]
		in.Snapshot = &Snapshot{Name: sp.Name, State: s.State, Path: s.Path, LastCompleted: s.LastCompleted, Created: s.At.Truncate(time.Second)}
	}
	return in
}

func (m *model) observed(c Color) *Child {
	x := m.C[c]
	if x == nil {
		return nil
	}
	return &Child{Name: x.Name, Color: c, Spec: *x.Spec.DeepCopy(), Overridden: slices.Clone(x.Overridden), Revision: x.Revision, LifecycleState: x.Lifecycle,
		JobState: x.Job, JobID: x.Run, Deleting: x.Deleting, Foreign: x.Foreign || x.Unowned && x.Deleting, Generation: x.Gen, ObservedGeneration: x.ObsGen,
		Created: t0.Add(time.Duration(x.Created) * time.Second), Unowned: x.Unowned && !x.Deleting,
		Labels: map[string]string{TypeLabel: string(c)}}
}

// reconcile is one reconcile of the adapter. crash(n, first) tells after
// how many of the decision's n actions the process dies (n: after all of
// them, before the status write; -1: it does not; -2: not this event);
// first says the status is written before the actions (StatusFirst).
func (m *model) reconcile(crash func(n int, first bool) int) (bool, error) {
	if m.Gone {
		return false, nil
	}
	in := m.input()
	d, err := Decide(in)
	if err != nil {
		return true, fmt.Errorf("Decide: %v", err)
	}
	first := StatusFirst(in, d)
	stop := crash(len(d.Actions), first)
	if stop == -2 {
		return false, nil
	}
	if err := m.checkDecision(in, d); err != nil {
		return true, err
	}
	m.seen = m.snapshot()
	if due := Overdue(in); m.LastFailed == stateKeyOf(&in.Parent.Status) && due != "" && m.P.DeletionTimestamp.IsZero() {
		// The adapter remembers an earlier reconcile's failure on this
		// state: once its deadline passed, it ends the rollout instead of
		// acting.
		return true, m.rejected(*m.FailedAct, unavailable, due)
	} else if len(d.Actions) == 0 {
		m.LastFailed = "" // the adapter forgets a failure when nothing is to be done
	}
	if first {
		if err := m.write(in, d); err != nil {
			return true, err
		}
	}
	return true, m.run(in, d, first, stop)
}

// run makes the decision's actions as the adapter does, stopping after
// stop of them, and writes the status after them unless it went first.
func (m *model) run(in Input, d Decision, first bool, stop int) error {
	for i, a := range d.Actions {
		if i == stop {
			return nil
		}
		if msg := m.rejects(a); msg != "" {
			return m.rejected(a, msg, "")
		}
		if m.Failing {
			return m.failing(a)
		}
		if err := m.checkRespec(a, d); err != nil {
			return err
		}
		if err := m.act(a); err != nil {
			return err
		}
	}
	if stop < 0 {
		m.LastFailed = ""
		if err := m.checkOneJob(&in.Parent.Status); err != nil {
			return err
		}
	}
	if !first && stop != len(d.Actions) {
		if err := m.write(in, d); err != nil {
			return err
		}
	}
	if stop < 0 && d.Finalize {
		return m.gone(false)
	}
	return nil
}

// checkOneJob: outside a transition one job runs. A reconcile of an
// ACTIVE state that leaves the other colour running (not deleted, not
// suspended) once all its actions are made leaves two jobs running.
func (m *model) checkOneJob(prev *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	st := &m.P.Status
	if !st.BlueGreenState.Active() || !prev.BlueGreenState.Active() || st.ActiveDeployment == "" {
		return nil
	}
	c := m.colorOfName(st.ActiveDeployment)
	a, o := m.C[c], m.C[c.Other()]
	if a != nil && !a.Deleting && a.Run != "" && o != nil && !o.Deleting && !o.Spec.Suspended() && o.Run != "" {
		return fmt.Errorf("%s active and %s still running after a reconcile of %s", st.ActiveDeployment, o.Name, prev.BlueGreenState)
	}
	return nil
}

const unavailable = "the server is currently unable to handle the request"

// stateKeyOf is the adapter's stateKey: the state a failure is
// remembered on.
func stateKeyOf(st *v1alpha1.FlinkBlueGreenDeploymentStatus) string {
	sp := ""
	if st.Savepoint != nil {
		sp = st.Savepoint.Name
	}
	return string(st.BlueGreenState) + "|" + st.TargetRevision + "|" + sp
}

// failing: an action failed with an error that retrying may fix. The
// adapter retries until it has failed before on the state as stored (a
// status that went first included) and that state's deadline has passed
// (Overdue), then decides
// again with the failure; until then nothing is written (but a status
// that went first), and the rollout's timers still run.
func (m *model) failing(a Action) error {
	if !m.P.DeletionTimestamp.IsZero() && DeletionOverdue(m.P, m.P.DeletionTimestamp.Time, m.Now) {
		return m.gone(true) // the adapter lets the deletion complete
	}
	key := stateKeyOf(&m.P.Status)
	before := m.LastFailed == key
	if due := Overdue(m.input()); before && due != "" {
		return m.rejected(a, unavailable, due)
	}
	m.LastFailed, m.FailedAct = key, &a
	if !before {
		return nil // the first failure on this state is retried
	}
	return m.checkTimers(&m.P.Status)
}

// rejected is the adapter's answer to a rejected action (or one failing
// past its deadline, lasting): observe again and decide with the
// rejection, on the status as stored (a status that went first included).
func (m *model) rejected(a Action, msg, lasting string) error {
	key := m.requestKey()
	if lasting == "" && m.RejKey == key && m.P.DeletionTimestamp.IsZero() { // a deletion retries until its deadline
		return fmt.Errorf("rejected %s attempted again without a new commit or retry", a.Type)
	}
	in := m.input()
	in.Rejection = &Rejection{Action: a, Message: msg, Lasting: lasting}
	d, err := Decide(in)
	if err != nil {
		return fmt.Errorf("Decide: %v", err)
	}
	if err := m.checkDecision(in, d); err != nil {
		return err
	}
	first := StatusFirst(in, d)
	if first {
		if err := m.write(in, d); err != nil {
			return err
		}
	}
	for _, b := range d.Actions {
		if m.rejects(b) != "" {
			if reflect.DeepEqual(b, a) && lasting == "" {
				return fmt.Errorf("the decision on a rejection makes the rejected request again: %s", describeActions([]Action{b}))
			}
			return nil // the adapter marks the parent Stalled and retries later
		}
		if m.Failing {
			return nil // retried, with the status as written
		}
		if err := m.checkRespec(b, d); err != nil {
			return err
		}
		if err := m.act(b); err != nil {
			return err
		}
	}
	if !first {
		if err := m.write(in, d); err != nil {
			return err
		}
	}
	if lasting == "" {
		m.RejKey = key
	}
	m.LastFailed = ""
	if d.Finalize {
		return m.gone(false)
	}
	return nil
}

// mHeld is a decision of a replica that stalled (paused, partitioned, its
// requests held in the network) and whose requests land later.
type mHeld struct {
	In      Input            // what it observed, the parent included (its optimistic lock)
	D       Decision         // what it decided
	Seen    map[Color]mChild // the children as it observed them (its preconditions)
	Written bool             // its status went first and landed; only its requests are held
}

// stall: a replica decides, and stalls before (intent false) or after
// (intent true) writing a status that goes first.
func (m *model) stall(intent bool, skew time.Duration) (bool, error) {
	if m.Held != nil || m.Gone {
		return false, nil
	}
	in := m.input()
	in.Now = in.Now.Add(skew)
	d, err := Decide(in)
	if err != nil {
		return true, fmt.Errorf("Decide: %v", err)
	}
	if len(d.Actions) == 0 && reflect.DeepEqual(d.Status, in.Parent.Status) || intent && !StatusFirst(in, d) {
		return false, nil
	}
	if err := m.checkDecision(in, d); err != nil {
		return true, err
	}
	m.Held = &mHeld{In: in, D: d, Seen: m.snapshot(), Written: intent}
	if intent {
		m.seen = m.Held.Seen
		m.Stalling = true
		defer func() { m.Stalling = false }()
		return true, m.write(in, d)
	}
	return true, nil
}

// release: the stalled replica's requests land, each with the adapter's
// preconditions: its status write with the resourceVersion it read, its
// deletes and its applies to a child it observed with that child's uid
// and resourceVersion. A request whose precondition fails changes
// nothing (409); the replica then reads again and decides anew, as any.
func (m *model) release() (bool, error) {
	h := m.Held
	if h == nil {
		return false, nil
	}
	m.Held = nil
	first := StatusFirst(h.In, h.D)
	if !h.Written && first {
		if !reflect.DeepEqual(m.P, h.In.Parent) {
			return true, nil
		}
		if err := m.writeHeld(h); err != nil {
			return true, err
		}
	}
	m.decidedAt = h.In.Now
	defer func() { m.decidedAt = time.Time{} }()
	for _, a := range h.D.Actions {
		if !m.unchanged(h, a) || m.rejects(a) != "" {
			return true, nil
		}
		if err := m.act(a); err != nil {
			return true, err
		}
	}
	if h.Written || first || !reflect.DeepEqual(m.P, h.In.Parent) {
		return true, nil
	}
	return true, m.writeHeld(h)
}

// writeHeld is the stalled replica's status write, judged as of its
// decision: the status was true of the children it observed, at its
// clock; the next reconcile judges them anew.
func (m *model) writeHeld(h *mHeld) error {
	now, children := m.Now, m.C
	m.Now, m.C, m.seen = h.In.Now, map[Color]*mChild{}, h.Seen
	for c, x := range h.Seen {
		x := x
		m.C[c] = &x
	}
	err := m.write(h.In, h.D)
	m.Now, m.C = now, children
	return err
}

// unchanged is a's precondition: the child it acts on is the one the
// replica observed, unchanged since. An apply that creates a child has
// none (server-side apply creates or updates).
func (m *model) unchanged(h *mHeld, a Action) bool {
	name := a.ChildName
	if a.Type == ApplyChild {
		name = a.Child.Name
	}
	if a.Type == CreateSnapshot || h.In.Observed(name) == nil {
		return true
	}
	c := m.colorOfName(name)
	x, seen := m.C[c], h.Seen[c]
	return x != nil && reflect.DeepEqual(*x, seen)
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
	if err := m.checkUnowned(a); err != nil {
		return err
	}
	switch a.Type {
	case ApplyChild:
		return m.applyChild(a.Child)
	case DeleteChild:
		return m.deleteChild(a.ChildName)
	case CreateSnapshot:
		if m.Snaps[a.Snapshot.Name] == nil && a.Snapshot.Record != nil {
			m.createRecord(a.Snapshot)
		} else if m.Snaps[a.Snapshot.Name] == nil {
			m.Snaps[a.Snapshot.Name] = &mSnap{Job: a.Snapshot.JobName, State: SnapshotTriggerPending, At: m.Now}
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
		if err := m.checkSavepointAge(cs); err != nil {
			return err
		}
		if err := m.checkFirstStart(cs); err != nil {
			return err
		}
		x = &mChild{Name: cs.Name, Color: cs.Color, Created: m.Seq}
		m.Seq++
		m.C[cs.Color] = x
	}
	spec := x.applied(&cs.Spec)
	if x.Gen == 0 || !equalSpec(&x.Spec, &spec) {
		x.Gen++
	}
	x.Unowned = false // the adapter's apply sets the parent's owner reference
	x.Spec, x.Git, x.Revision = spec, *cs.Spec.DeepCopy(), cs.Revision
	return nil
}

// applied is the child's spec after a server-side apply of spec: the
// replicas another field manager set stay unless spec sets them (then
// the apply takes the field over).
func (x *mChild) applied(spec *v1alpha1.FlinkDeploymentSpec) v1alpha1.FlinkDeploymentSpec {
	out := *spec.DeepCopy()
	if !slices.Contains(x.Overridden, "taskManager.replicas") {
		return out
	}
	set := rawMap(out.TaskManager)
	if _, ok := set["replicas"]; ok {
		x.Overridden = nil
		return out
	}
	set["replicas"] = rawMap(x.Spec.TaskManager)["replicas"]
	b, _ := json.Marshal(set)
	out.TaskManager = rawJSON(string(b))
	return out
}

func rawMap(j *apiextensionsv1.JSON) map[string]any {
	m := map[string]any{}
	if j != nil {
		_ = json.Unmarshal(j.Raw, &m)
	}
	return m
}

// checkSavepointAge: a new colour never starts from a savepoint asked for
// longer ago than the savepoint timeout (and the rounding of deadlines to
// the second): the source may no longer hold the records since. Nor is it
// restarted for a later commit from the savepoint it first started from
// while the old colour runs: that one takes a fresh savepoint.
//
// It is judged when the decision is taken (decidedAt): a request held in
// the network after it lands when it lands.
func (m *model) checkSavepointAge(cs *ChildSpec) error {
	at := m.Now
	if !m.decidedAt.IsZero() {
		at = m.decidedAt
	}
	name, ok := strings.CutPrefix(cs.Spec.Job.InitialSavepointPath, "/sp/")
	s := m.Snaps[name]
	if !ok || s == nil || cs.Spec.Suspended() || m.restoresRecord(cs) {
		return nil
	}
	if at.Sub(s.At) > mSpTime+2*mRound {
		return fmt.Errorf("%s started from savepoint %s, asked for at %s, decided at %s: older than the savepoint timeout (%s)",
			cs.Name, name, m.since(s.At), m.since(at), mSpTime)
	}
	if s.Started != "" && s.Started != cs.Spec.Image && m.oldColourRuns(cs.Color) {
		return fmt.Errorf("%s restarted for %s from savepoint %s, which started it for %s, while %s could take a fresh one",
			cs.Name, cs.Spec.Image, name, s.Started, m.C[cs.Color.Other()].Name)
	}
	if s.Started == "" {
		s.Started = cs.Spec.Image
	}
	return nil
}

// oldColourRuns reports that the colour other than c runs, ready to take
// a savepoint.
func (m *model) oldColourRuns(c Color) bool {
	o := m.C[c.Other()]
	return o != nil && m.ready(o)
}

// checkSuspend: the job holding the latest state is suspended only when
// the user asks, or when another job that carries that state (or that the
// spec chose to start without it) runs.
func (m *model) checkSuspend(cs *ChildSpec) error {
	x := m.C[cs.Color]
	if x == nil || !cs.Spec.Suspended() || x.Spec.Suspended() {
		return nil
	}
	if m.P.Spec.Template.Spec.Suspended() || !m.holds(x) {
		return nil
	}
	if o := m.C[cs.Color.Other()]; o != nil && m.ready(o) && (m.carries(o.Run) || m.exempt(o.Run)) {
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
	if !m.P.DeletionTimestamp.IsZero() && m.holds(x) && !m.finalRecordCovers(x) {
		return fmt.Errorf("%s, which holds the latest state, deleted with its parent before a final record of it was kept (%s)", name, m.describe())
	}
	if m.holds(x) && m.P.DeletionTimestamp.IsZero() {
		o := m.C[x.Color.Other()]
		switch {
		case o == nil || !m.ready(o):
			return fmt.Errorf("%s, which holds the latest state, deleted while the other colour does not run its current spec", name)
		case !m.carries(o.Run) && !m.exempt(o.Run) && !m.droppedByChoice(m.Holder):
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

// droppedByChoice: run r started from empty state because its spec was
// stateless (a restart by hand under upgradeMode stateless): it holds no
// state that a job started from an earlier savepoint lacks.
func (m *model) droppedByChoice(r string) bool {
	run, ok := m.Runs[r]
	return ok && run.Chosen && run.From == ""
}

// exempt: the user chose a start without the latest state (a stateless
// upgrade mode, or a savepoint redeploy from their own path).
func (m *model) exempt(r string) bool {
	tpl := &m.P.Spec.Template.Spec
	if !tpl.Stateful() || StartsEmptyOnPurpose(m.P) && m.rootOf(r) == "" {
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
	m.wrote = append(m.wrote, mWrite{From: m.P.Status.BlueGreenState, D: d})
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
	if err := m.checkSucceeded(&in.Parent.Status); err != nil {
		return err
	}
	if err := m.checkWindow(in); err != nil {
		return err
	}
	if err := m.checkRolloutKind(&in.Parent.Status); err != nil {
		return err
	}
	return m.checkTimers(&in.Parent.Status)
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

// checkTruth: job RUNNING means the active child runs its current spec;
// ACTIVE_X with job SUSPENDED means X's job has stopped as asked.
func (m *model) checkTruth() error {
	st := &m.P.Status
	x := m.C[m.colorOfName(st.ActiveDeployment)]
	switch st.JobStatus.State {
	case v1alpha1.JobRunning:
		if st.ActiveDeployment == "" || x == nil || !m.ready(x) {
			return fmt.Errorf("status %s/RUNNING but %q does not run its current spec (%s)", st.BlueGreenState, st.ActiveDeployment, m.describe())
		}
	case v1alpha1.JobSuspended:
		if st.BlueGreenState.Active() && (x == nil || !m.stopped(x)) {
			return fmt.Errorf("status %s/SUSPENDED but the job of %s has not stopped (%s)", st.BlueGreenState, st.ActiveDeployment, m.describe())
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
		if !m.exempt(x.Run) && !m.fromSeenPath(x.Run) {
			return fmt.Errorf("first active job %s started from %q, not from an initialSavepointPath of the spec (%v)", x.Name, m.rootOf(x.Run), m.PathsSeen)
		}
	case x.Run == m.AltHolder:
	case !m.carries(x.Run) && !m.exempt(x.Run) && !m.droppedByChoice(m.Holder):
		return fmt.Errorf("%s made active, but its job (from %q) does not carry the latest state (%s)", x.Name, m.Runs[x.Run].From, m.Holder)
	}
	m.Holder, m.AltHolder, m.Fresh = x.Run, "", false
	return nil
}

// fromSeenPath: run r started from an initialSavepointPath the template
// had while no job held state, or from empty state if it had none.
func (m *model) fromSeenPath(r string) bool {
	for p := range m.PathsSeen {
		if p == "" && m.rootOf(r) == "" || p != "" && m.descends(r, m.token(p)) {
			return true
		}
	}
	return false
}

// rootOf is what the first run of r's chain restored from: "" (empty
// state) or a user's savepoint.
func (m *model) rootOf(r string) string {
	for n := 0; n < 100; n++ {
		run, ok := m.Runs[r]
		if !ok {
			return r
		}
		r = run.From
	}
	return r
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
	if r, ok := m.Paths[strings.TrimPrefix(path, "file:")]; ok {
		return r
	}
	return "user:" + path
}

// checkTimers holds each timer of a rollout to its own bound, measured
// from what the model saw (mTimers), whatever the status records:
//   - a savepoint not completed within the savepoint timeout ends the
//     attempt;
//   - a target not running its spec when the abort grace period is over
//     is given up (a new target revision, handled mid-way, restarts the
//     period; so does, in Manual mode, a target that stops being ready, as
//     documented);
//   - a target that runs its spec is cut over once the deletion delay is
//     over (Automatic mode, or after a promotion in Manual mode).
//
// A transition waiting for a person to promote it is not bounded.
func (m *model) checkTimers(prev *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	st, t := &m.P.Status, &m.T
	if !st.BlueGreenState.Savepointing() || st.Savepoint == nil {
		t.SpName, t.SpAt = "", time.Time{}
	} else if t.SpName != st.Savepoint.Name {
		t.SpName, t.SpAt = st.Savepoint.Name, m.Now
	} else if m.Now.Sub(t.SpAt) >= mSpTime+mRound && !m.Stalling {
		return fmt.Errorf("savepoint %s asked for at %s still awaited at %s: the savepoint timeout (%s) did not end the attempt",
			t.SpName, m.since(t.SpAt), m.since(m.Now), mSpTime)
	}
	if !st.BlueGreenState.Transitioning() {
		t.TStart, t.ReadyAt, t.WasReady, t.Flapped = time.Time{}, time.Time{}, false, false
		return nil
	}
	if prev.BlueGreenState != st.BlueGreenState || prev.TargetRevision != st.TargetRevision || t.TStart.IsZero() {
		t.TStart, t.ReadyAt, t.WasReady, t.Flapped = m.Now, time.Time{}, false, false
	}
	// Ready for the transition: it carries the revision rolled out (an
	// in-place target whose patch has not landed runs the old one).
	target := m.C[m.targetColor()]
	ready := target != nil && target.Revision == st.TargetRevision && (m.ready(target) || m.stopped(target))
	manual := m.P.PromotionMode() == v1alpha1.PromotionManual
	switch {
	case !ready && (t.WasReady || t.Flapped) && manual:
		// Documented: a fresh grace period for the person to decide, armed
		// when the controller next sees the target not ready.
		t.Flapped = true
	case !ready && m.Now.Sub(t.TStart) >= mGrace+mRound && !m.Stalling:
		return fmt.Errorf("%s not ready since the transition began at %s, still transitioning at %s: the abort grace period (%s) did not end it",
			st.BlueGreenState, m.since(t.TStart), m.since(m.Now), mGrace)
	}
	if !ready {
		t.WasReady, t.ReadyAt = false, time.Time{}
		return nil
	}
	if !t.WasReady && prev.BlueGreenState == st.BlueGreenState && prev.TargetRevision == st.TargetRevision {
		// Seen ready by a reconcile of the transition (the one that
		// starts it does not look at the target).
		t.WasReady, t.ReadyAt = true, m.Now
	}
	if !t.WasReady {
		return nil
	}
	from := t.ReadyAt
	if manual {
		if m.P.Annotations[v1alpha1.PromoteRequestedAtAnnotation] == prev.LastHandledPromoteAt {
			return nil // waiting for a person
		}
		from = later(from, t.Promote)
	}
	if m.Now.Sub(from) >= mDelay+mRound {
		return fmt.Errorf("the target has run its spec since %s, still transitioning at %s: the deletion delay (%s) did not end it",
			m.since(from), m.since(m.Now), mDelay)
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (m *model) since(t time.Time) string { return t.Sub(t0).String() }

// targetColor is the colour of TRANSITIONING_TO_X.
func (m *model) targetColor() Color {
	if m.P.Status.BlueGreenState == v1alpha1.TransitioningToGreen {
		return Green
	}
	return Blue
}

// stopped is a child whose job the Flink operator suspended as asked.
func (m *model) stopped(x *mChild) bool {
	return !x.Deleting && x.Spec.Suspended() && x.ObsGen == x.Gen && x.Run == "" && x.Lifecycle == LifecycleSuspended
}

// checkSucceeded: a rollout ends Succeeded only when its target is the
// active deployment and, as the reconcile observed it, ran the revision's
// spec (or had stopped, as a suspend asks); checkLineage has judged the
// state it started from.
func (m *model) checkSucceeded(prev *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	st := &m.P.Status
	for _, r := range st.History {
		if r.Outcome != v1alpha1.RolloutSucceeded || slices.ContainsFunc(prev.History, func(o v1alpha1.RolloutRecord) bool {
			return o.StartedAt.Equal(&r.StartedAt) && o.Revision == r.Revision && o.Outcome == r.Outcome
		}) {
			continue
		}
		if r.To == "" && m.P.Spec.Template.Spec.Suspended() {
			continue // a suspended first deployment starts nothing
		}
		x, ok := m.seen[m.colorOfName(r.To)]
		switch {
		case r.To != st.ActiveDeployment:
			return fmt.Errorf("rollout of %s to %s Succeeded, but %q is the active deployment", r.Revision, r.To, st.ActiveDeployment)
		case !ok || x.Deleting:
			return fmt.Errorf("rollout of %s Succeeded, but %s did not exist", r.Revision, r.To)
		case x.Revision != r.Revision:
			return fmt.Errorf("rollout of %s Succeeded, but %s carried %s", r.Revision, r.To, x.Revision)
		case !m.ready(&x) && !m.stopped(&x):
			return fmt.Errorf("rollout of %s Succeeded, but %s does not run its spec (%s)", r.Revision, r.To, m.describe())
		}
	}
	return nil
}

// checkWindow: a blue/green transition (a savepoint, or a new colour
// beside the active one) starts only inside a rollout window. A new
// colour that already runs (a decision taken inside the window started it
// and lost its status write) is taken up again, not started.
func (m *model) checkWindow(in Input) error {
	st, prev := &m.P.Status, &in.Parent.Status
	started := st.BlueGreenState.Savepointing() ||
		st.BlueGreenState.Transitioning() && st.ActiveDeployment != "" && st.ActiveDeployment != ChildName(m.P.Name, m.targetColor())
	if m.Closed && started && !prev.BlueGreenState.InProgress() && !alreadyRuns(in, st, m.targetColor()) {
		return fmt.Errorf("%s begun while the rollout window is closed", st.BlueGreenState)
	}
	return nil
}

// alreadyRuns reports a transition to a colour that was running when the
// decision observed it.
func alreadyRuns(in Input, st *v1alpha1.FlinkBlueGreenDeploymentStatus, target Color) bool {
	c := in.Blue
	if target == Green {
		c = in.Green
	}
	return st.BlueGreenState.Transitioning() && c != nil && !c.Deleting && !c.suspendedSpec()
}

// checkClosedWindow: while the rollout window is closed, a colour beside
// the active one is only ever applied running with the template as it
// was when the window closed: a commit that lands after it closed starts
// no new colour and re-specs none. Judged when the decision is taken.
func (m *model) checkClosedWindow(in Input, d Decision) error {
	before, after := in.Parent.Status.ActiveDeployment, d.Status.ActiveDeployment
	if in.Window.Open || m.OpenSpec == nil || before == "" {
		return nil
	}
	for _, a := range d.Actions {
		cs := a.Child
		if a.Type != ApplyChild || cs.Name == before || cs.Name == after || cs.Spec.Suspended() || sameTemplate(m.OpenSpec, &cs.Spec) {
			continue
		}
		return fmt.Errorf("%s applied with a spec committed after the rollout window closed (%s, not %s)", cs.Name, cs.Spec.Image, m.OpenSpec.Image)
	}
	return nil
}

// sameTemplate compares two child specs but for what the controller sets
// itself: the savepoint path, the job state and the colour's ingress.
func sameTemplate(a, b *v1alpha1.FlinkDeploymentSpec) bool {
	x, y := a.DeepCopy(), b.DeepCopy()
	for _, s := range []*v1alpha1.FlinkDeploymentSpec{x, y} {
		s.Ingress = nil
		if s.Job != nil {
			s.Job.InitialSavepointPath, s.Job.State = "", ""
		}
	}
	return equalSpec(x, y)
}

func openImage(s *v1alpha1.FlinkDeploymentSpec) string {
	if s == nil {
		return ""
	}
	return s.Image + s.UpgradeModeOrDefault()
}

// checkRolloutKind: a rollout begun from ACTIVE_X is the kind Plan gives
// for the change from what Git set on X (the spec bg-gitops last applied
// to it) to the spec: a field another field manager changed (an HPA
// scaling X) never turns an in-place change into a blue/green transition.
func (m *model) checkRolloutKind(prev *v1alpha1.FlinkBlueGreenDeploymentStatus) error {
	h := m.P.Status.History
	if !prev.BlueGreenState.Active() || len(h) == 0 || h[len(h)-1].Outcome != v1alpha1.RolloutInProgress {
		return nil
	}
	r := h[len(h)-1]
	x, ok := m.seen[m.colorOfName(r.From)]
	if r.Kind == v1alpha1.RolloutFirst || !ok || x.Deleting {
		return nil
	}
	base := m.P.Spec.DeepCopy()
	base.Template.Spec = *x.Git.DeepCopy()
	base.Template.Spec.Ingress = childTemplateIngress(x.Git.Ingress, m.P.Spec.Template.Spec.Ingress, x.Color)
	want := v1alpha1.RolloutBlueGreen
	switch rollout, _ := Plan(base, &m.P.Spec); {
	case rollout == RolloutNothing:
		return nil // a retry
	case rollout.InPlace():
		want = v1alpha1.RolloutInPlace
	}
	if r.Kind != want && !(r.Kind == v1alpha1.RolloutInPlace && stuckOnAbortedPatch(prev, x)) {
		return fmt.Errorf("the rollout of %s from %s is %s; what Git set on it makes it %s", r.Revision, r.From, r.Kind, want)
	}
	return nil
}

// stuckOnAbortedPatch: X, as the decision saw it, ran no job and carried
// the in-place change the status last recorded as aborted, which never
// went live: the one case in which a change that would be a blue/green
// transition is applied in place (there is no job to take a savepoint
// from; runsAbortedPatch).
func stuckOnAbortedPatch(prev *v1alpha1.FlinkBlueGreenDeploymentStatus, x mChild) bool {
	h, live := prev.History, prev.LiveRevisions
	if len(h) == 0 || x.Job == JobRunning {
		return false
	}
	last := h[len(h)-1]
	return last.Kind == v1alpha1.RolloutInPlace && last.Outcome == v1alpha1.RolloutAborted && last.To == x.Name &&
		last.Revision == x.Revision && (len(live) == 0 || live[len(live)-1] != x.Revision)
}

// checkRespec: in a stateful blue/green transition, a new colour the Flink
// operator has deployed from a savepoint is never given a new spec in place (it would
// continue from its own state, not the savepoint): it is deleted and
// deployed again from the savepoint.
func (m *model) checkRespec(a Action, d Decision) error {
	if a.Type != ApplyChild {
		return nil
	}
	cs, st := a.Child, &d.Status
	x := m.C[cs.Color]
	if x == nil || !x.Deployed || x.Deleting || x.FirstPath == "" || cs.Spec.Suspended() || equalSpec(&x.Spec, &cs.Spec) ||
		!m.P.Spec.Template.Spec.Stateful() {
		return nil
	}
	if n := cs.Spec.Job.SavepointRedeployNonce; n != nil && *n != x.Nonce || m.exempt(x.Run) {
		return nil // the Flink operator redeploys it from initialSavepointPath itself, or the user chose its state
	}
	if st.BlueGreenState == transitioningTo(cs.Color) && st.ActiveDeployment == ChildName(m.P.Name, cs.Color.Other()) {
		return fmt.Errorf("%s, the new colour of a stateful transition, re-specced in place instead of deployed again from the savepoint", cs.Name)
	}
	return nil
}

// checkDecision: every failure is visible (a Warning event, Ready False
// with a reason), and at most one child per colour is asked for.
func (m *model) checkDecision(in Input, d Decision) error {
	if err := m.checkClosedWindow(in, d); err != nil {
		return err
	}
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
	if err := checkWakeUp(d); err != nil {
		return err
	}
	return checkHistoryApplies(d)
}

// checkWakeUp: a rollout under way polls at least every reschedule
// interval (nothing but a requeue wakes the controller when no object
// changes), except while it waits for a person to promote it.
func checkWakeUp(d Decision) error {
	st := &d.Status
	if !st.BlueGreenState.InProgress() || d.Finalize {
		return nil
	}
	if c := findCondition(st.Conditions, v1alpha1.ReconcilingCondition); c != nil && c.Reason == "WaitingForPromotion" {
		return nil
	}
	if d.RequeueAfter <= 0 || d.RequeueAfter > mInterval+mRound {
		return fmt.Errorf("%s requeued after %s, not within the reschedule interval %s", st.BlueGreenState, d.RequeueAfter, mInterval)
	}
	return nil
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
