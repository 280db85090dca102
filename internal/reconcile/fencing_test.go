/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// holding is the network in front of one controller instance: the first
// request that matches, and every request of the instance after it, is
// held until release, then delivered in order, also if the instance gave
// up on it (a paused or partitioned replica, a request stuck in the
// network and delivered late).
type holding struct {
	next  http.RoundTripper
	match func(r *http.Request, body []byte) bool

	mu     sync.Mutex
	armed  bool
	caught chan struct{} // closed when the first request is held
	gate   chan struct{} // closed by release
	order  sync.Mutex    // delivers held requests one at a time, in order
	held   []string
	first  int // the status code the first held request got, once delivered
}

func newHolding(match func(r *http.Request, body []byte) bool) *holding {
	return &holding{match: match, caught: make(chan struct{}), gate: make(chan struct{})}
}

func (h *holding) wrap(cfg *rest.Config) *rest.Config { return wrapped(cfg, &h.next, h) }

// wrapped is cfg with rt in front of its transport, which rt sends to
// through *next.
func wrapped(cfg *rest.Config, next *http.RoundTripper, rt http.RoundTripper) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(t http.RoundTripper) http.RoundTripper { *next = t; return rt })
	return cfg
}

// peekBody reads r's body and leaves it in place for the transport.
func peekBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

func (h *holding) RoundTrip(r *http.Request) (*http.Response, error) {
	body := peekBody(r)
	h.mu.Lock()
	if !h.armed && h.match(r, body) {
		h.armed = true
		close(h.caught)
	}
	armed := h.armed
	if armed {
		h.held = append(h.held, r.Method+" "+r.URL.Path)
	}
	h.mu.Unlock()
	if !armed || r.Method == http.MethodGet && strings.Contains(r.URL.RawQuery, "watch=true") {
		return h.next.RoundTrip(r)
	}
	h.order.Lock()
	defer h.order.Unlock()
	<-h.gate
	late := r.Clone(context.Background()) // the network delivers it even if the sender gave up
	late.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := h.next.RoundTrip(late)
	h.mu.Lock()
	if h.first == 0 && resp != nil {
		h.first = resp.StatusCode
	}
	h.mu.Unlock()
	return resp, err
}

// heldRequests are the requests held so far.
func (h *holding) heldRequests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.held...)
}

// firstCode is the status code the first held request got (0: none yet).
func (h *holding) firstCode() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first
}

func (h *holding) release() { close(h.gate) }

// A replica that decided the cut-over to green (delete blue, ACTIVE_GREEN)
// and stalled before its requests landed cannot, when they land, delete
// blue after a second replica aborted the transition because green failed:
// its status write carries the resourceVersion it read and is refused,
// and it acts on nothing. Without the fence the late delete left no job
// running.
func TestStalledReplicaCannotDeleteTheJobAnAbortKept(t *testing.T) {
	ns := newNamespace(t)
	parentStatus := "/namespaces/" + ns + "/flinkbluegreendeployments/job/status"
	blueObject := "/namespaces/" + ns + "/flinkdeployments/job-blue"
	a := newHolding(func(r *http.Request, body []byte) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, blueObject) ||
			r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, parentStatus) && bytes.Contains(body, []byte(v1alpha1.ActiveGreen))
	})
	startControllerWith(t, ns, a.wrap(env.Config))
	blueJob := deployBlue(t, ns, "job")

	// Green fails 4 s after it starts; A cuts over 2 s after green is ready.
	update(t, ns, "job", 2, "flink:1.20.1", `, "`+flinksim.FaultFailAfter+`": "4s"`, withAbortGrace("8s"),
		func(p *v1alpha1.FlinkBlueGreenDeployment) {
			p.Spec.Configuration[v1alpha1.DeploymentDeletionDelayKey] = "2s"
		})
	select {
	case <-a.caught:
	case <-time.After(waitFor):
		t.Fatal("replica A never decided the cut-over")
	}
	eventually(t, ns, "green to fail", func() bool { return jobStateOf(ns, "job-green") == "FAILED" })

	startController(t, ns) // replica B
	eventually(t, ns, "B's abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	a.release()

	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		blue, ok := child(ns, "job-blue")
		require.True(t, ok, "blue exists after A's requests landed (%v)", a.heldRequests())
		require.Nil(t, blue.GetDeletionTimestamp(), "blue is not being deleted (A's requests: %v)", a.heldRequests())
		require.Equal(t, v1alpha1.ActiveBlue, getFBGD(t, ns, "job").Status.BlueGreenState)
	}
	assert.Equal(t, blueJob, jobID(ns, "job-blue"), "blue's job ran throughout")
}

// refusing answers the requests that match with an API error, and passes
// the others on.
type refusing struct {
	next  http.RoundTripper
	match func(r *http.Request, body []byte) bool
	code  int
	// reason is the Status reason of the answer (Forbidden, ServiceUnavailable).
	reason string

	mu    sync.Mutex
	count int
}

func (f *refusing) wrap(cfg *rest.Config) *rest.Config { return wrapped(cfg, &f.next, f) }

func (f *refusing) RoundTrip(r *http.Request) (*http.Response, error) {
	body := peekBody(r)
	if !f.match(r, body) {
		return f.next.RoundTrip(r)
	}
	f.mu.Lock()
	f.count++
	f.mu.Unlock()
	msg := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected: ` + f.reason + `","reason":"` + f.reason +
		`","code":` + strconv.Itoa(f.code) + `}`
	return &http.Response{StatusCode: f.code, Status: http.StatusText(f.code), Request: r,
		Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(strings.NewReader(msg))}, nil
}

func (f *refusing) refused() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count
}

// An error that lasts (503 on every apply of the new colour, after the
// savepoint completed) does not stop the clock: the rollout ends at the
// deadline of its state, blue kept running, with the error in status.error and a
// Warning event. Without it every retry failed before the status write,
// no deadline fired, and green would later start from an old savepoint.
func TestLastingAPIErrorEndsTheRolloutAtItsDeadline(t *testing.T) {
	ns := newNamespace(t)
	green := "/namespaces/" + ns + "/flinkdeployments/job-green"
	f := &refusing{code: http.StatusServiceUnavailable, reason: "ServiceUnavailable", match: func(r *http.Request, _ []byte) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, green)
	}}
	startControllerWith(t, ns, f.wrap(env.Config))
	blueJob := deployBlue(t, ns, "job")

	update(t, ns, "job", 2, "flink:1.20.1", "", withSavepointTimeout("4s"), withAbortGrace("6s"))
	defer func() {
		if t.Failed() {
			p := getFBGD(t, ns, "job")
			t.Logf("status: %s %s %q refused=%d", p.Status.BlueGreenState, p.Status.JobStatus.State, p.Status.Error, f.refused())
		}
	}()
	eventually(t, ns, "the rollout to fail", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	require.NotZero(t, f.refused(), "the apply of green was answered 503")
	p := getFBGD(t, ns, "job")
	assert.Contains(t, p.Status.Error, "kept failing past")
	assert.Contains(t, p.Status.Error, "injected: ServiceUnavailable")
	eventuallyWarned(t, ns, "job", "Rejected")
	_, exists := child(ns, "job-green")
	assert.False(t, exists, "green was never created")
	assert.Equal(t, blueJob, jobID(ns, "job-blue"), "blue's job ran throughout")
}

// A suspend the cluster refuses during an abort (here an admission
// webhook's 403 on the suspend of green) deletes the aborted colour
// instead: never two running jobs waiting for a person.
func TestRefusedSuspendDuringAnAbortDeletesTheAbortedColour(t *testing.T) {
	ns := newNamespace(t)
	green := "/namespaces/" + ns + "/flinkdeployments/job-green"
	f := &refusing{code: http.StatusForbidden, reason: "Forbidden", match: func(r *http.Request, body []byte) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, green) && bytes.Contains(body, []byte(`"state":"suspended"`))
	}}
	startControllerWith(t, ns, f.wrap(env.Config))
	blueJob := deployBlue(t, ns, "job")

	update(t, ns, "job", 2, "flink:1.20.1", `, "`+flinksim.FaultNeverReady+`": "true"`, withAbortGrace("4s"))
	eventually(t, ns, "the abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	eventually(t, ns, "green to be deleted", func() bool { _, ok := child(ns, "job-green"); return !ok })
	require.NotZero(t, f.refused(), "the suspend of green was refused")
	assert.Contains(t, getFBGD(t, ns, "job").Status.Error, "is deleted instead")
	eventuallyWarned(t, ns, "job", "SuspendRejected")
	assert.Equal(t, blueJob, jobID(ns, "job-blue"), "blue's job ran throughout")
}

// A status write held in the network (replica A's SAVEPOINTING_BLUE for
// the first commit) that lands after a second replica has moved on to
// the transition is refused: it carries the resourceVersion A read. The
// rollout goes on from B's status to the end; without the lock A's late
// write put the parent back to SAVEPOINTING over B's transition.
func TestLateStatusWriteOfAStalledReplicaIsRefused(t *testing.T) {
	ns := newNamespace(t)
	parentStatus := "/namespaces/" + ns + "/flinkbluegreendeployments/job/status"
	a := newHolding(func(r *http.Request, body []byte) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, parentStatus) &&
			bytes.Contains(body, []byte(v1alpha1.SavepointingBlue))
	})
	startControllerWith(t, ns, a.wrap(env.Config))
	deployBlue(t, ns, "job")

	update(t, ns, "job", 2, "flink:1.20.1", "")
	select {
	case <-a.caught:
	case <-time.After(waitFor):
		t.Fatal("replica A never wrote SAVEPOINTING_BLUE")
	}
	startController(t, ns) // replica B
	eventually(t, ns, "B's transition", func() bool {
		return getFBGD(t, ns, "job").Status.BlueGreenState == v1alpha1.TransitioningToGreen
	})
	a.release()
	eventually(t, ns, "A's write to land", func() bool { return a.firstCode() != 0 })
	assert.Equal(t, http.StatusConflict, a.firstCode(), "A's late status write is refused")
	eventually(t, ns, "the rollout to end", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	eventually(t, ns, "blue to be deleted", func() bool {
		b, ok := child(ns, "job-blue")
		return !ok || b.GetDeletionTimestamp() != nil
	})
	assert.Equal(t, revision(2), getFBGD(t, ns, "job").Status.ActiveRevision)
}

// A replica that decided the cut-over to green (ACTIVE_GREEN, delete blue)
// and stalled cannot, when its requests land, delete blue after a second
// replica restarted green for a newer commit: its status write conflicts,
// so it deletes nothing. Green starts again from a fresh savepoint of
// blue, whose job runs until green does. Without the fence both colours
// ended up deleted: A's late delete of blue and B's restart of green.
func TestStalledCutOverCannotDeleteTheJobARestartKeeps(t *testing.T) {
	ns := newNamespace(t)
	parentStatus := "/namespaces/" + ns + "/flinkbluegreendeployments/job/status"
	blueObject := "/namespaces/" + ns + "/flinkdeployments/job-blue"
	a := newHolding(func(r *http.Request, body []byte) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, blueObject) ||
			r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, parentStatus) && bytes.Contains(body, []byte(v1alpha1.ActiveGreen))
	})
	startControllerWith(t, ns, a.wrap(env.Config))
	blueJob := deployBlue(t, ns, "job")

	update(t, ns, "job", 2, "flink:1.20.1", "", func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.DeploymentDeletionDelayKey] = "2s"
	})
	select {
	case <-a.caught:
	case <-time.After(waitFor):
		t.Fatal("replica A never decided the cut-over")
	}
	first := getFBGD(t, ns, "job").Status.Savepoint.Path
	update(t, ns, "job", 3, "flink:1.20.2", "", func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.DeploymentDeletionDelayKey] = "2s"
	})
	startController(t, ns) // replica B
	eventually(t, ns, "B's restart of green", func() bool {
		return getFBGD(t, ns, "job").Status.TargetRevision == revision(3)
	})
	a.release()
	eventually(t, ns, "A's write to land", func() bool { return a.firstCode() != 0 })
	assert.Equal(t, http.StatusConflict, a.firstCode(), "A's late status write is refused")

	eventually(t, ns, "the rollout of the newer commit", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	p := getFBGD(t, ns, "job")
	assert.Equal(t, revision(3), p.Status.ActiveRevision)
	green, ok := sim.Lineage().Job(jobID(ns, "job-green"))
	require.True(t, ok)
	sp, ok := sim.Lineage().Savepoint(green.RestoredFrom)
	require.True(t, ok, "green restored from a savepoint, not %q", green.RestoredFrom)
	assert.Equal(t, blueJob, sp.JobID, "a savepoint of the blue job that ran throughout")
	assert.NotEqual(t, first, green.RestoredFrom, "a fresh savepoint, not the one of the superseded commit")
	blue, ok := sim.Lineage().Job(blueJob)
	require.True(t, ok)
	if blue.Stopped {
		assert.False(t, blue.StoppedAt.Before(green.StartedAt), "blue's job stopped at %s, before green's started at %s", blue.StoppedAt, green.StartedAt)
	}
}
