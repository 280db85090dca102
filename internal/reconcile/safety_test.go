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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// A child the cluster rejects (a string where the FlinkDeployment CRD
// requires a number; the parent's template is schemaless) fails the
// rollout visibly and leaves blue running; a new commit clears it.
func TestChildTheClusterRejectsFailsTheRollout(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")

	update(t, ns, "job", 2, "flink:1.20.1", "", stringCPU)
	eventually(t, ns, "the rejection as a failed rollout", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	p := getFBGD(t, ns, "job")
	assert.Contains(t, p.Status.Error, "spec.taskManager.resource.cpu", "the API server's message names the field")
	assert.Equal(t, revision(2), p.Status.TargetRevision, "the failure belongs to the rejected revision")
	assert.True(t, apimeta.IsStatusConditionFalse(p.Status.Conditions, v1alpha1.ReadyCondition))
	stalled := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.StalledCondition)
	require.NotNil(t, stalled, "Stalled is set")
	assert.NotEmpty(t, stalled.Reason)
	eventuallyWarned(t, ns, "job", "Rejected")
	assert.Equal(t, blueJob, jobID(ns, "job-blue"), "blue's job is untouched")
	assert.Equal(t, "RUNNING", jobState(ns, "job-blue"))
	_, green := child(ns, "job-green")
	assert.False(t, green, "no green was created")

	// The fix differs from the rejected spec only in the type of one value.
	update(t, ns, "job", 3, "flink:1.20.1", "")
	eventually(t, ns, "the fixed commit rolled out", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	restored, ok := sim.Lineage().Job(jobID(ns, "job-green"))
	require.True(t, ok)
	sp, ok := sim.Lineage().Savepoint(restored.RestoredFrom)
	require.True(t, ok, "green started from a savepoint")
	assert.Equal(t, blueJob, sp.JobID, "of blue's job")
}

// The same rejection on a first deployment: the status is written.
func TestFirstDeploymentTheClusterRejectsFails(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")
	stringCPU(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "the rejection as a failed deployment", state(t, ns, "job", v1alpha1.InitializingBlue, v1alpha1.JobFailing))
	assert.Contains(t, getFBGD(t, ns, "job").Status.Error, "spec.taskManager.resource.cpu")
	eventuallyWarned(t, ns, "job", "Rejected")
}

func stringCPU(p *v1alpha1.FlinkBlueGreenDeployment) {
	p.Spec.Template.Spec.TaskManager = &apiextensionsv1.JSON{Raw: []byte(`{"resource":{"memory":"1024m","cpu":"1"}}`)}
}

// eventuallyWarned waits for a Warning event of the reason about a
// parent: the recorder writes events asynchronously, after the status.
func eventuallyWarned(t testing.TB, ns, name, reason string) {
	t.Helper()
	eventually(t, ns, "a "+reason+" warning about "+name, func() bool {
		return slices.Contains(warnings(t, ns, name), reason)
	})
}

// warnings lists the reasons of the Warning events about a parent.
func warnings(t testing.TB, ns, name string) []string {
	t.Helper()
	evs := &eventsv1.EventList{}
	require.NoError(t, env.Client.List(context.Background(), evs, client.InNamespace(ns)))
	var out []string
	for _, e := range evs.Items {
		if e.Type == "Warning" && e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// A suspend lost after an abort, in the order of a fenced abort: the
// abort's status is written first, its suspend of green fails once, and
// before the next reconcile green reports STABLE/RUNNING at its previous
// generation. The next reconcile must not take green for ready and delete
// blue: it suspends green again.
func TestLostSuspendAfterAbortKeepsBlue(t *testing.T) {
	ns := newNamespace(t)
	fault := &statusFault{path: "/namespaces/" + ns + "/flinkdeployments/job-green", armOn: "/namespaces/" + ns + "/flinkdeployments/job-green"}
	fault.whenFailing = func() { reportStaleReady(t, ns, "job-green") }
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { fault.next = rt; return fault })
	startControllerWith(t, ns, cfg)
	blueJob := deployBlue(t, ns, "job")

	// Green never comes up within the grace period: the simulated
	// operator does not act on its spec for a minute.
	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-observe-delay": "60s"`, withAbortGrace("4s"))
	eventually(t, ns, "the abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	eventually(t, ns, "green suspended", func() bool {
		green, _ := child(ns, "job-green")
		return nested(green, "spec", "job", "state") == "suspended"
	})
	require.True(t, fault.fired(), "the suspend of green failed once")
	blue, ok := child(ns, "job-blue")
	require.True(t, ok, "blue exists")
	assert.Nil(t, blue.GetDeletionTimestamp(), "blue is not being deleted")
	assert.Equal(t, blueJob, jobID(ns, "job-blue"))
	assert.Contains(t, getFBGD(t, ns, "job").Status.Error, "aborted")
}

// statusFault fails the first write to path once a suspend of the green
// child has been sent (the suspend itself when path is green's), and
// runs whenFailing before answering, in place of what the world does
// between two reconciles.
type statusFault struct {
	next        http.RoundTripper
	path, armOn string
	whenFailing func()

	mu          sync.Mutex
	armed, done bool
}

func (f *statusFault) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPatch {
		return f.next.RoundTrip(r)
	}
	if strings.HasSuffix(r.URL.Path, f.armOn) && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"state":"suspended"`)) {
			f.mu.Lock()
			f.armed = true
			f.mu.Unlock()
		}
	}
	if strings.HasSuffix(r.URL.Path, f.path) && f.take() {
		f.whenFailing()
		return &http.Response{StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error",
			Header: http.Header{"Content-Type": []string{"application/json"}}, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","code":500}`))}, nil
	}
	return f.next.RoundTrip(r)
}

func (f *statusFault) take() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || f.done {
		return false
	}
	f.done = true
	return true
}

func (f *statusFault) fired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

// reportStaleReady writes what the Flink operator reports while a new
// spec waits: its job up, at the previous generation.
func reportStaleReady(t testing.TB, ns, name string) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	ctx := context.Background()
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Errorf("read %s: %v", name, err)
		return
	}
	patch := []byte(`{"status":{"lifecycleState":"STABLE","observedGeneration":` + strconv.FormatInt(u.GetGeneration()-1, 10) +
		`,"jobStatus":{"state":"RUNNING","jobId":"0123456789abcdef0123456789abcdef"}}}`)
	if err := env.Client.Status().Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Errorf("report %s ready: %v", name, err)
	}
}

// A new colour whose job keeps crashing and coming back (the simulator's
// flap fault) cannot hold the transition open: it aborts at the deadline
// it got when it started, and blue keeps running.
func TestFlappingNewColourAbortsAtItsDeadline(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blueJob := deployBlue(t, ns, "job")
	update(t, ns, "job", 2, "flink:1.20.1", `, "bggitops.dev/simulate-flap": "1s"`, withAbortGrace("4s"), func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.DeploymentDeletionDelayKey] = "1500ms"
	})
	eventually(t, ns, "the abort", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	assert.Contains(t, getFBGD(t, ns, "job").Status.Error, "not ready within")
	assert.Equal(t, blueJob, jobID(ns, "job-blue"), "blue's job ran throughout")
	green, _ := child(ns, "job-green")
	assert.Equal(t, "suspended", nested(green, "spec", "job", "state"))
}
