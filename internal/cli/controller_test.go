/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops controller` run as a process: flags, probes, leader
// election and sharding.

package cli

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// The tests of `bg-gitops controller` run the command as processes (see
// cliMainEnv) against a control plane of their own: the package's shared
// cluster runs in-process controllers for every namespace, which would
// reconcile the very objects these tests prove a controller leaves alone.
// Only the Flink operator simulator runs beside them. Every controller
// process watches one label value (--watch-label-selector) so that no two
// subtests see each other's objects.

// shardLabel selects the objects of one subtest.
const shardLabel = "test.bggitops.dev/shard"

// leaseName is the leader election Lease of `bg-gitops controller`.
const leaseName = "bg-gitops-controller-leader"

// processTimeout bounds every wait on a controller process: starting a
// process and a rollout on a loaded 2-core machine.
const processTimeout = 90 * time.Second

const controllerTestFBGD = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  annotations: {bggitops.dev/revision: "main@sha1:0000000000000000000000000000000000000001"}
spec:
  configuration:
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "2s"
  template:
    spec:
      image: flink:1.20.0
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 1}
`

func TestControllerCommand(t *testing.T) {
	env, err := testenv.Start(testenv.Options{})
	testenv.Require(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	sim, err := reconciletest.Start(env.Config, reconciletest.Options{Simulator: flinksim.New(reconciletest.SimulatorOptions)})
	require.NoError(t, err)
	t.Cleanup(sim.Stop)

	t.Run("FlagErrors", func(t *testing.T) { testControllerFlagErrors(t, env) })
	t.Run("Probes", func(t *testing.T) { testControllerProbes(t, env) })
	t.Run("LeaderElection", func(t *testing.T) { testControllerLeaderElection(t, env) })
	t.Run("Sharding", func(t *testing.T) { testControllerSharding(t, env) })
	t.Run("ShardingSourceOutsideShard", func(t *testing.T) { testControllerShardingSourceOutsideShard(t, env) })
	t.Run("GeneratedRBAC", func(t *testing.T) { testControllerGeneratedRBAC(t, env) })
	t.Run("ReceiverOnly", func(t *testing.T) { testControllerReceiverOnly(t, env) })
}

// controllerProcess is a running `bg-gitops controller` and its addresses.
type controllerProcess struct {
	*cliProcess
	probe, metrics, receiver string
}

// startControllerProcess runs `bg-gitops controller` with 127.0.0.1
// addresses and extra flags, and waits until /healthz answers.
func startControllerProcess(t *testing.T, name, kubeconfig string, extra ...string) *controllerProcess {
	t.Helper()
	c := &controllerProcess{probe: freeAddress(t), metrics: freeAddress(t), receiver: freeAddress(t)}
	args := append([]string{"controller", "--kubeconfig", kubeconfig,
		"--health-probe-bind-address", c.probe, "--metrics-bind-address", c.metrics,
		"--receiver-bind-address", c.receiver, "--cache-dir", t.TempDir()}, extra...)
	c.cliProcess = startProcess(t, name, args...)
	c.until(t, processTimeout, name+" /healthz", func() bool { code, _ := httpGet("http://" + c.probe + "/healthz"); return code == 200 })
	return c
}

// waitReady waits until /readyz answers 200; from then on the webhook
// receiver serves (a GET is refused with 405, a POST is looked at).
func (c *controllerProcess) waitReady(t *testing.T) {
	t.Helper()
	c.until(t, processTimeout, c.name+" /readyz", func() bool { code, _ := httpGet("http://" + c.probe + "/readyz"); return code == 200 })
	code, body := httpGet("http://" + c.receiver + "/")
	assert.Equal(t, 405, code, "%s is ready, so its receiver serves: %s", c.name, body)
}

func (c *controllerProcess) scrape(t *testing.T) string {
	t.Helper()
	code, body := httpGet("http://" + c.metrics + "/metrics")
	require.Equal(t, 200, code, "%s /metrics: %s", c.name, body)
	return body
}

// leader reports whether the process holds the Lease, by its own account.
func (c *controllerProcess) leader(t *testing.T) bool {
	v, ok := metric(c.scrape(t), "leader_election_master_status", `name="`+leaseName+`"`)
	return ok && v == 1
}

// reconciles is how many reconciles of kind's controller the process ran;
// started is false when that controller never started (its metrics are
// created when it starts).
func (c *controllerProcess) reconciles(t *testing.T, kind string) (n float64, started bool) {
	return metric(c.scrape(t), "controller_runtime_reconcile_total", `controller="`+kind+`"`)
}

const fbgdController = "flinkbluegreendeployment"

func testControllerFlagErrors(t *testing.T, env *testenv.Env) {
	type flagCase struct {
		name string
		args []string
		want string
	}
	cases := []flagCase{{"bad selector", []string{"--watch-label-selector", "shard in (a"}, "--watch-label-selector"}}
	// Outside a cluster controller-runtime cannot read the pod's namespace
	// file, so the Lease needs a namespace from the flag. (Inside a pod
	// the file is there and the flag is optional: nothing to check.)
	if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		t.Logf("running in a pod (%s exists): --leader-elect without a namespace is valid here", "/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	} else {
		cases = append(cases, flagCase{"leader election without a namespace", []string{"--leader-elect"}, "--leader-election-namespace"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startProcess(t, "controller", append([]string{"controller", "--kubeconfig", env.Kubeconfig,
				"--health-probe-bind-address", "0", "--metrics-bind-address", "0", "--receiver-bind-address", "0"}, tc.args...)...)
			assert.Equal(t, 2, p.wait(t, processTimeout), "exit code")
			assert.Contains(t, p.errors(), tc.want)
		})
	}
}

func testControllerProbes(t *testing.T, env *testenv.Env) {
	ns := reconciletest.Namespace(t, env.Client)
	c := startControllerProcess(t, "controller", env.Kubeconfig, "--watch-label-selector", shardLabel+"="+ns)
	c.waitReady(t)
	for _, path := range []string{"/healthz", "/readyz", "/healthz/healthz", "/readyz/readyz", "/readyz/receiver"} {
		code, body := httpGet("http://" + c.probe + path)
		assert.Equal(t, 200, code, "%s: %s", path, body)
	}
	_, body := httpGet("http://" + c.probe + "/readyz?verbose")
	assert.Contains(t, body, "[+]receiver ok")
	code, _ := httpGet("http://" + c.probe + "/readyz/nonexistent")
	assert.Equal(t, 404, code, "an unknown check")

	// The probes answer for a controller that works: without
	// --leader-elect it reconciles at once.
	p := newTestFBGD(t, ns, "job", map[string]string{shardLabel: ns})
	require.NoError(t, env.Client.Create(context.Background(), p))
	c.until(t, processTimeout, "job ACTIVE_BLUE", fbgdState(t, env, ns, "job", v1alpha1.ActiveBlue))
	n, started := c.reconciles(t, fbgdController)
	assert.True(t, started && n > 0, "the controller ran reconciles (%v)", n)

	// SIGTERM (what the kubelet sends) ends it cleanly, and the probes go
	// with it.
	require.NoError(t, c.stop(syscall.SIGTERM, 60*time.Second))
	assert.Equal(t, 0, c.exitCode, "exit code after SIGTERM")
	code, _ = httpGet("http://" + c.probe + "/healthz")
	assert.Equal(t, 0, code, "nothing listens on the probe address after exit")
}

func testControllerLeaderElection(t *testing.T, env *testenv.Env) {
	ctx := context.Background()
	ns := reconciletest.Namespace(t, env.Client)
	args := []string{"--leader-elect", "--leader-election-namespace", ns, "--watch-label-selector", shardLabel + "=" + ns}

	a := startControllerProcess(t, "controller-a", env.Kubeconfig, args...)
	var holderA string
	a.until(t, processTimeout, "controller-a holds the Lease", func() bool {
		holderA = leaseHolder(t, env, ns)
		return holderA != "" && a.leader(t)
	})
	b := startControllerProcess(t, "controller-b", env.Kubeconfig, args...)
	// A replica waiting for the Lease becomes ready: it serves the webhook
	// receiver (which needs no leadership) and must stay behind the Service.
	b.waitReady(t)

	p := newTestFBGD(t, ns, "job", map[string]string{shardLabel: ns})
	require.NoError(t, env.Client.Create(ctx, p))
	a.until(t, processTimeout, "job ACTIVE_BLUE", fbgdState(t, env, ns, "job", v1alpha1.ActiveBlue))

	// Exactly one reconciles: the leader's controllers ran, the follower's
	// never started (controller-runtime creates a controller's metrics when
	// it starts it), and the Lease stayed with the first holder.
	n, started := a.reconciles(t, fbgdController)
	assert.True(t, started && n > 0, "the leader reconciled (%v)", n)
	_, started = b.reconciles(t, fbgdController)
	assert.False(t, started, "the follower's controllers never started")
	assert.False(t, b.leader(t), "the follower does not claim the Lease")
	assert.Equal(t, holderA, leaseHolder(t, env, ns))

	// Stop the leader (SIGTERM): it releases the Lease on the way out and
	// the follower takes over.
	// stop returns once the process has exited, and the manager releases
	// the Lease before it returns (LeaderElectionReleaseOnCancel): read at
	// once, the Lease is free, or already the follower's. Without the
	// release it would name the leader until its 15 s lease ran out.
	require.NoError(t, a.stop(syscall.SIGTERM, 60*time.Second))
	require.True(t, a.exited())
	assert.Equal(t, 0, a.exitCode, "the leader exits cleanly")
	released := leaseHolder(t, env, ns)
	assert.NotEqual(t, holderA, released, "the leader released the Lease before it exited")
	var holderB string
	b.until(t, processTimeout, "controller-b holds the Lease", func() bool {
		holderB = leaseHolder(t, env, ns)
		return holderB != "" && holderB != holderA && b.leader(t)
	})
	if released != "" {
		assert.Equal(t, holderB, released, "right after the leader's exit the Lease is free or the follower's")
	}

	// A change made after the leader is gone is reconciled: the new leader
	// rolls it out.
	updateFBGD(t, env, ns, "job", func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Image = "flink:1.20.1"
		p.Annotations[v1alpha1.RevisionAnnotation] = "main@sha1:0000000000000000000000000000000000000002"
	})
	b.until(t, processTimeout, "job ACTIVE_GREEN on the new image", func() bool {
		p := getTestFBGD(t, env, ns, "job")
		return p.Status.BlueGreenState == v1alpha1.ActiveGreen && p.Status.JobStatus.State == v1alpha1.JobRunning &&
			p.Status.ObservedGeneration == p.Generation && p.Status.ActiveRevision == "main@sha1:0000000000000000000000000000000000000002"
	})
	n, started = b.reconciles(t, fbgdController)
	assert.True(t, started && n > 0, "the new leader reconciled (%v)", n)
	assert.Equal(t, holderB, leaseHolder(t, env, ns), "no one else took the Lease")
}

func testControllerSharding(t *testing.T, env *testenv.Env) {
	ctx := context.Background()
	ns := reconciletest.Namespace(t, env.Client)
	in := map[string]string{shardLabel: ns}
	out := map[string]string{shardLabel: ns + "-other"}
	// One worker per kind, and a queue that hands out events of equal
	// priority in the order they came (controller-runtime's priority
	// queue): an object the controller saw before another is reconciled
	// before it.
	c := startControllerProcess(t, "controller", env.Kubeconfig, "--watch-label-selector", shardLabel+"="+ns, "--concurrent", "1")

	// The controller watches: an object of the shard is reconciled.
	require.NoError(t, env.Client.Create(ctx, newTestFBGD(t, ns, "first", in)))
	c.until(t, processTimeout, "first reconciled", func() bool { return getTestFBGD(t, env, ns, "first").Status.ObservedGeneration > 0 })

	root := t.TempDir()
	git := gittest.ServeHTTP(t, root, gittest.HTTPOptions{})
	repo := gittest.NewRepo(t, root, "app")
	repo.Commit(map[string]string{
		"inside/kustomization.yaml":  "resources: [configmap.yaml]\n",
		"inside/configmap.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inside}\n",
		"outside/kustomization.yaml": "resources: [configmap.yaml]\n",
		"outside/configmap.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\n",
	}, "two paths")
	repo.Push("main")
	// Outside first, then inside.
	require.NoError(t, env.Client.Create(ctx, newTestGitRepository(ns, "outside", git.URL+"/app.git", "./outside", out)))
	require.NoError(t, env.Client.Create(ctx, newTestFBGD(t, ns, "outside", out)))
	require.NoError(t, env.Client.Create(ctx, newTestGitRepository(ns, "inside", git.URL+"/app.git", "./inside", in)))
	require.NoError(t, env.Client.Create(ctx, newTestFBGD(t, ns, "inside", in)))
	c.until(t, processTimeout, "inside reconciled", func() bool {
		gr := getTestGitRepository(t, env, ns, "inside")
		return gr.Status.ObservedGeneration == gr.Generation && meta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition) &&
			getTestFBGD(t, env, ns, "inside").Status.ObservedGeneration > 0
	})
	assert.True(t, configMapExists(t, env, ns, "inside"))

	// The objects outside the shard were queued before the inside ones, if
	// the controller had seen them: untouched.
	gr := getTestGitRepository(t, env, ns, "outside")
	assert.Zero(t, gr.Status.ObservedGeneration, "GitRepository outside the shard")
	assert.Empty(t, gr.Status.Conditions)
	assert.False(t, configMapExists(t, env, ns, "outside"), "nothing applied for the GitRepository outside the shard")
	p := getTestFBGD(t, env, ns, "outside")
	assert.Zero(t, p.Status.ObservedGeneration, "FlinkBlueGreenDeployment outside the shard")
	assert.Empty(t, p.Status.BlueGreenState)
	_, exists := flinkChild(env, ns, "outside-blue")
	assert.False(t, exists, "no child for the FlinkBlueGreenDeployment outside the shard")

	// Moved into the shard (a label change only), they are reconciled: the
	// label was all that kept the controller away.
	for _, obj := range []client.Object{&v1alpha1.GitRepository{}, &v1alpha1.FlinkBlueGreenDeployment{}} {
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "outside"}, obj))
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		obj.SetLabels(in)
		require.NoError(t, env.Client.Patch(ctx, obj, patch))
	}
	c.until(t, processTimeout, "outside reconciled once inside the shard", func() bool {
		gr := getTestGitRepository(t, env, ns, "outside")
		return meta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition) && configMapExists(t, env, ns, "outside") &&
			getTestFBGD(t, env, ns, "outside").Status.ObservedGeneration > 0
	})
}

// testControllerShardingSourceOutsideShard: the rollout windows of the
// GitRepository that applied a FlinkBlueGreenDeployment hold its
// transitions even when that GitRepository is not in the controller's
// shard (labels in Git and on the GitRepository are set by different
// people; a mismatch must not open the window).
func testControllerShardingSourceOutsideShard(t *testing.T, env *testenv.Env) {
	ctx := context.Background()
	ns := reconciletest.Namespace(t, env.Client)
	c := startControllerProcess(t, "controller", env.Kubeconfig, "--watch-label-selector", shardLabel+"="+ns)

	src := newTestGitRepository(ns, "src", "https://git.invalid/src.git", "./", map[string]string{shardLabel: ns + "-other"})
	src.Spec.RolloutWindows = []v1alpha1.RolloutWindow{{Schedule: "0 3 29 2 *", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Europe/Berlin"}}
	require.NoError(t, env.Client.Create(ctx, src))
	p := newTestFBGD(t, ns, "job", map[string]string{shardLabel: ns})
	p.Annotations[v1alpha1.SourceAnnotation] = src.SourceValue()
	require.NoError(t, env.Client.Create(ctx, p))
	c.until(t, processTimeout, "job ACTIVE_BLUE (a first deployment is not held)", fbgdState(t, env, ns, "job", v1alpha1.ActiveBlue))

	updateFBGD(t, env, ns, "job", func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Image = "flink:1.20.1"
		p.Annotations[v1alpha1.RevisionAnnotation] = "main@sha1:0000000000000000000000000000000000000002"
	})
	c.until(t, processTimeout, "the new spec reconciled", func() bool {
		p := getTestFBGD(t, env, ns, "job")
		return p.Status.ObservedGeneration == p.Generation
	})
	p = getTestFBGD(t, env, ns, "job")
	assert.Equal(t, v1alpha1.ActiveBlue, p.Status.BlueGreenState, "the transition waits for the window")
	cond := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ReconcilingCondition)
	if assert.NotNil(t, cond) {
		assert.Equal(t, "WaitingForRolloutWindow", cond.Reason)
	}
	_, exists := flinkChild(env, ns, "job-green")
	assert.False(t, exists, "no new colour outside the window")
}

func newTestFBGD(t *testing.T, ns, name string, labels map[string]string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(controllerTestFBGD), p))
	p.Namespace, p.Name, p.Labels = ns, name, labels
	return p
}

func newTestGitRepository(ns, name, url, path string, labels map[string]string) *v1alpha1.GitRepository {
	return &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: v1alpha1.GitRepositorySpec{URL: url, Path: path, TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
}

func getTestFBGD(t *testing.T, env *testenv.Env, ns, name string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p))
	return p
}

func getTestGitRepository(t *testing.T, env *testenv.Env, ns, name string) *v1alpha1.GitRepository {
	t.Helper()
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, gr))
	return gr
}

// fbgdState holds when the object is in state bg, its job RUNNING, at its
// current generation.
func fbgdState(t *testing.T, env *testenv.Env, ns, name string, bg v1alpha1.BlueGreenState) func() bool {
	return func() bool {
		p := getTestFBGD(t, env, ns, name)
		return p.Status.BlueGreenState == bg && p.Status.JobStatus.State == v1alpha1.JobRunning && p.Status.ObservedGeneration == p.Generation
	}
}

// updateFBGD applies change to the object, retrying on conflicts with the
// controller's status writes.
func updateFBGD(t *testing.T, env *testenv.Env, ns, name string, change func(*v1alpha1.FlinkBlueGreenDeployment)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := getTestFBGD(t, env, ns, name)
		change(p)
		err := env.Client.Update(context.Background(), p)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || time.Now().After(deadline) {
			t.Fatalf("update %s/%s: %v", ns, name, err)
		}
	}
}

func configMapExists(t *testing.T, env *testenv.Env, ns, name string) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &corev1.ConfigMap{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// leaseHolder is the holder of the controller's Lease in ns; "" when there
// is none (or it was released).
func leaseHolder(t *testing.T, env *testenv.Env, ns string) string {
	t.Helper()
	l := &coordinationv1.Lease{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: leaseName}, l)
	if apierrors.IsNotFound(err) {
		return ""
	}
	require.NoError(t, err)
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return strings.TrimSpace(*l.Spec.HolderIdentity)
}
