/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Snapshots are ours only if we made them: a transition restores only the
// FlinkStateSnapshot whose uid the controller's own create was given.

// hookedTransport lets a test stand between the controller and the API
// server: hook sees each request and sends it on (or not) with send.
type hookedTransport struct {
	next http.RoundTripper
	hook func(r *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error)
}

func (h *hookedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return h.hook(r, h.next.RoundTrip)
}

// startHookedController is startController with every request of the
// controller passed through hook.
func startHookedController(t *testing.T, ns string, hook func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error)) (stop func()) {
	t.Helper()
	h := &hookedTransport{hook: hook}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { h.next = rt; return h })
	return startControllerWith(t, ns, cfg)
}

func createsSnapshot(r *http.Request, ns string) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/namespaces/"+ns+"/flinkstatesnapshots")
}

func writesStatusOf(r *http.Request, name string) bool {
	return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/flinkbluegreendeployments/"+name+"/status")
}

// sendTwice sends r's body first as another client's request would (the
// planter's, answered as it is), then as r.
func sendTwice(r *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	_ = r.Body.Close()
	plant := r.Clone(r.Context())
	plant.Body = io.NopCloser(bytes.NewReader(body))
	if resp, err := send(plant); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return send(r)
}

// bump changes the object's resourceVersion (an annotation no decision
// reads); from a request hook, so it reports nothing to the test.
func bump(ns, name string) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	p.Namespace, p.Name = ns, name
	_ = env.Client.Patch(context.Background(), p,
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"test.bggitops.dev/bump":"1"}}}`)))
}

func snapshotUID(t *testing.T, ns, name string) types.UID {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u))
	return u.GetUID()
}

// notOurs waits for the rollout to fail with SnapshotNotOurs, blue still
// running the job it ran, and no green started.
func notOurs(t *testing.T, ns, blueJob, why string) {
	t.Helper()
	eventually(t, ns, "the rollout failed", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	p := getFBGD(t, ns, "job")
	assert.Contains(t, p.Status.Error, "was not created by bg-gitops for job")
	assert.Contains(t, p.Status.Error, why)
	assert.Equal(t, blueJob, jobID(ns, "job-blue"), "blue keeps running its job")
	_, green := child(ns, "job-green")
	assert.False(t, green, "no green was started")
}

// TestASnapshotPlantedUnderTheNextNameFailsTheRollout: someone creates the
// snapshot the controller is about to ask for (the same object: owned by
// the deployment, of its job, asking for a savepoint) just before it does.
// The controller's create finds it (AlreadyExists), records no uid of its
// own, and the rollout fails with SnapshotNotOurs instead of starting
// green from the planted savepoint; a retry asks under another name and
// rolls out.
func TestASnapshotPlantedUnderTheNextNameFailsTheRollout(t *testing.T) {
	ns := newNamespace(t)
	var planted atomic.Bool
	startHookedController(t, ns, func(r *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if createsSnapshot(r, ns) && planted.CompareAndSwap(false, true) {
			return sendTwice(r, send)
		}
		return send(r)
	})
	blueJob := deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", "")
	notOurs(t, ns, blueJob, "status.savepoint.uid is empty")

	annotate(t, ns, "job", v1alpha1.RetryRequestedAtAnnotation)
	eventually(t, ns, "ACTIVE_GREEN after the retry", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)
}

// TestALostStatusWriteAfterTheSnapshotCreateKeepsItOurs: the status write
// that records the created snapshot's uid is lost (a conflict); the
// replica that created the snapshot still knows its uid, trusts it and
// records it with its next decision: the rollout goes on from the
// savepoint it asked for.
func TestALostStatusWriteAfterTheSnapshotCreateKeepsItOurs(t *testing.T) {
	ns := newNamespace(t)
	var created, lost atomic.Bool
	startHookedController(t, ns, func(r *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if writesStatusOf(r, "job") && created.Load() && lost.CompareAndSwap(false, true) {
			bump(ns, "job") // the write now conflicts
		}
		resp, err := send(r)
		if createsSnapshot(r, ns) && err == nil && resp.StatusCode == http.StatusCreated {
			created.Store(true)
		}
		return resp, err
	})
	blueJob := deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", "")
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	require.True(t, lost.Load(), "the status write after the create was lost")
	green, _ := child(ns, "job-green")
	assertRestoredFrom(t, green, blueJob)
	sp := getFBGD(t, ns, "job").Status.Savepoint
	require.NotNil(t, sp)
	assert.Equal(t, snapshotUID(t, ns, sp.Name), sp.UID)
}

// TestASnapshotWhoseUIDWasNotRecordedBeforeARestartFailsSafe: the
// controller records the savepoint it asks for, creates the snapshot and
// stops before the status write that records its uid. The controller
// started next finds a snapshot it cannot tell from a planted one: the
// rollout fails with SnapshotNotOurs, blue running.
func TestASnapshotWhoseUIDWasNotRecordedBeforeARestartFailsSafe(t *testing.T) {
	ns := newNamespace(t)
	var created, refused atomic.Bool
	stop := startHookedController(t, ns, func(r *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if writesStatusOf(r, "job") && created.Load() {
			refused.Store(true)
			return nil, errors.New("the status write is lost")
		}
		resp, err := send(r)
		if createsSnapshot(r, ns) && err == nil && resp.StatusCode == http.StatusCreated {
			created.Store(true)
		}
		return resp, err
	})
	blueJob := deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", "")
	eventually(t, ns, "a status write after the create refused", refused.Load)
	stop()
	sp := getFBGD(t, ns, "job").Status.Savepoint
	require.NotNil(t, sp, "the decision was written before the create")
	require.Empty(t, sp.UID, "no status write recorded the created snapshot's uid")
	startController(t, ns)
	notOurs(t, ns, blueJob, "status.savepoint.uid is empty")
}

// TestASavepointUnderWayWithoutARecordedUIDFailsSafe: a status written by
// a version of bg-gitops that recorded no uid, mid-savepoint, trusts no
// snapshot: the rollout fails with SnapshotNotOurs, blue running.
func TestASavepointUnderWayWithoutARecordedUIDFailsSafe(t *testing.T) {
	ns := newNamespace(t)
	stop := startController(t, ns)
	const hang = `, "bggitops.dev/simulate-savepoint": "hang"`
	blueJob := deployBlueWith(t, ns, "job", hang)
	update(t, ns, "job", 2, "flink:1.20.1", hang)
	// The decision is written before the create, its uid in the write
	// after: wait for both.
	eventually(t, ns, "SAVEPOINTING_BLUE with the snapshot's uid", func() bool {
		p := getFBGD(t, ns, "job")
		return p.Status.BlueGreenState == v1alpha1.SavepointingBlue && p.Status.Savepoint != nil && p.Status.Savepoint.UID != ""
	})
	sp := getFBGD(t, ns, "job").Status.Savepoint
	require.NotNil(t, sp)
	assert.Equal(t, snapshotUID(t, ns, sp.Name), sp.UID, "the create's uid is recorded with the savepoint")
	stop()
	p := getFBGD(t, ns, "job")
	require.NoError(t, env.Client.Status().Patch(context.Background(), p,
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"savepoint":{"uid":null}}}`))))
	require.Empty(t, getFBGD(t, ns, "job").Status.Savepoint.UID)
	startController(t, ns)
	notOurs(t, ns, blueJob, "status.savepoint.uid is empty")
}
