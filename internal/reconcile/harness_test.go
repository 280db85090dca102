/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var (
	env *testenv.Env
	sim *flinksim.Simulator
)

const waitFor = 30 * time.Second

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	sim = flinksim.New(reconciletest.SimulatorOptions)
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Simulator: sim})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer mgr.Stop()
	return m.Run()
}

// newNamespace creates a namespace of the test's own, whose
// GitRepositories and FlinkBlueGreenDeployments keep the kstatus contract
// in every version stored while the test runs.
func newNamespace(t testing.TB) string {
	ns := reconciletest.Namespace(t, env.Client)
	reconciletest.WatchKstatus(t, env.Config, ns)
	return ns
}

// startController runs the bg-gitops reconcilers for one namespace until
// the returned stop function is called (or the test ends).
func startController(t testing.TB, ns string) (stop func()) {
	t.Helper()
	return startControllerWith(t, ns, env.Config)
}

// writeCounter counts the write requests a client sends (dry-runs excluded).
type writeCounter struct {
	next   http.RoundTripper
	writes atomic.Int64
	last   atomic.Value
}

func (w *writeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if !strings.Contains(r.URL.RawQuery, "dryRun=All") && !strings.Contains(r.URL.Path, "/leases/") {
			w.writes.Add(1)
			w.last.Store(r.Method + " " + r.URL.Path)
		}
	}
	return w.next.RoundTrip(r)
}

// startCountingController is startController with the controller's write
// requests counted.
func startCountingController(t testing.TB, ns string) *writeCounter {
	t.Helper()
	wc := &writeCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { wc.next = rt; return wc })
	startControllerWith(t, ns, cfg)
	return wc
}

func startControllerWith(t testing.TB, ns string, cfg *rest.Config) (stop func()) {
	t.Helper()
	mgr, err := reconciletest.Start(cfg, reconciletest.Options{Namespace: ns,
		Controllers: &reconcile.Options{CacheDir: t.TempDir(), Concurrent: 2, AllowInsecureHTTP: true}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)
	return mgr.Stop
}

func getFBGD(t testing.TB, ns, name string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p))
	reconciletest.CheckKstatus(t, p)
	return p
}

func child(ns, name string) (*unstructured.Unstructured, bool) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u)
	return u, err == nil
}

func nested(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

// eventually polls cond, checking the invariants of every FlinkBlueGreenDeployment
// in ns, and the kstatus contract of every GitRepository too, at each step.
func eventually(t testing.TB, ns string, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		checkInvariants(t, ns)
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func state(t testing.TB, ns, name string, bg v1alpha1.BlueGreenState, job v1alpha1.JobState) func() bool {
	return func() bool {
		p := getFBGD(t, ns, name)
		return p.Status.BlueGreenState == bg && p.Status.JobStatus.State == job
	}
}

// checkInvariants: never more than two children, never two of one colour,
// the active child of an ACTIVE_* state is never suspended, and the
// conditions of every FlinkBlueGreenDeployment and GitRepository keep the
// kstatus contract (reconciletest.CheckKstatus).
func checkInvariants(t testing.TB, ns string) {
	t.Helper()
	// Parents first: a status that shows a generation observed was written
	// after that generation's children, so children read later are at
	// least as new (checkActiveNotSuspended relies on it).
	parents := &v1alpha1.FlinkBlueGreenDeploymentList{}
	require.NoError(t, env.Client.List(context.Background(), parents, client.InNamespace(ns)))
	for i := range parents.Items {
		reconciletest.CheckKstatus(t, &parents.Items[i])
	}
	repos := &v1alpha1.GitRepositoryList{}
	require.NoError(t, env.Client.List(context.Background(), repos, client.InNamespace(ns)))
	for i := range repos.Items {
		reconciletest.CheckKstatus(t, &repos.Items[i])
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	perParent := map[string]map[string]int{}
	for _, c := range list.Items {
		owner := ""
		for _, r := range c.GetOwnerReferences() {
			owner = r.Name
		}
		if perParent[owner] == nil {
			perParent[owner] = map[string]int{}
		}
		perParent[owner][c.GetLabels()["flink/blue-green-deployment-type"]]++
	}
	for owner, colours := range perParent {
		total := 0
		for colour, n := range colours {
			require.LessOrEqualf(t, n, 1, "%s has %d children of colour %s", owner, n, colour)
			total += n
		}
		require.LessOrEqualf(t, total, 2, "%s has %d children", owner, total)
	}
	checkActiveNotSuspended(t, parents.Items, list.Items)
}

// checkActiveNotSuspended: once the controller has acted on a parent's
// current spec (observedGeneration), the active child of an ACTIVE_* state
// runs unless the spec itself asks for a suspended job. Children are
// applied before the parent's status is written, so a status that shows
// the generation observed implies the child already carries its spec.
func checkActiveNotSuspended(t testing.TB, parents []v1alpha1.FlinkBlueGreenDeployment, children []unstructured.Unstructured) {
	t.Helper()
	for _, p := range parents {
		st := p.Status
		if !st.BlueGreenState.Active() || st.ObservedGeneration != p.Generation || p.Spec.Template.Spec.Suspended() {
			continue
		}
		for _, c := range children {
			if c.GetName() != st.ActiveDeployment {
				continue
			}
			jobState, _, _ := unstructured.NestedString(c.Object, "spec", "job", "state")
			require.NotEqualf(t, v1alpha1.JobStateSuspended, jobState, "%s is %s and its active child %s is suspended", p.Name, st.BlueGreenState, c.GetName())
		}
	}
}

// fbgdTemplate's abort grace period and savepoint timeout are long: no
// test may depend on a transition outrunning them on a loaded machine. A
// test whose timer must fire shortens it (withAbortGrace,
// withSavepointTimeout) and makes the simulated job never ready or the
// savepoint hang, so the timer has nothing to race.
const fbgdTemplate = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: %s
  annotations: {bggitops.dev/revision: "%s"}
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "10 min"
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "200ms"
    bggitops.dev/savepoint-timeout: "10 min"
  template:
    spec:
      image: %s
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"%s}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

func revision(n int) string { return fmt.Sprintf("main@sha1:%040d", n) }

func fbgdObject(t testing.TB, ns, name string, rev int, image, extraConf string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(fmt.Sprintf(fbgdTemplate, name, revision(rev), image, extraConf)), p))
	p.Namespace = ns
	return p
}

// update re-applies the spec and revision of a new commit.
func update(t testing.TB, ns, name string, rev int, image, extraConf string, mutate ...func(*v1alpha1.FlinkBlueGreenDeployment)) {
	t.Helper()
	want := fbgdObject(t, ns, name, rev, image, extraConf)
	for _, m := range mutate {
		m(want)
	}
	require.Eventually(t, func() bool {
		p := getFBGD(t, ns, name)
		p.Spec = want.Spec
		p.Annotations[v1alpha1.RevisionAnnotation] = revision(rev)
		return env.Client.Update(context.Background(), p) == nil
	}, 5*time.Second, 50*time.Millisecond)
}

func annotate(t testing.TB, ns, name, key string) {
	t.Helper()
	p := getFBGD(t, ns, name)
	patch := client.MergeFrom(p.DeepCopy())
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[key] = time.Now().Format(time.RFC3339Nano)
	require.NoError(t, env.Client.Patch(context.Background(), p, patch))
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	return unstructured.NestedString(obj, path...)
}
