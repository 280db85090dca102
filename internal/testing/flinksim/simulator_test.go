/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package flinksim_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var (
	env *testenv.Env
	sim *flinksim.Simulator
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sim = flinksim.New(flinksim.Options{StartDelay: 300 * time.Millisecond, SavepointDelay: 300 * time.Millisecond})
	sim.Lineage().JournalTo(journal)
	if err := sim.SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	return m.Run()
}

var (
	namespacesMu sync.Mutex
	namespaces   = map[*testing.T]string{}
	created      int
)

// namespace is the test's own namespace, created on first use and unique
// per run, so that the tests' fixed object names pass with -count=2.
func namespace(t *testing.T) string {
	t.Helper()
	namespacesMu.Lock()
	defer namespacesMu.Unlock()
	if ns, ok := namespaces[t]; ok {
		return ns
	}
	created++
	ns := fmt.Sprintf("t%d-%s", created, strings.ToLower(t.Name()))
	if len(ns) > 50 {
		ns = strings.TrimRight(ns[:50], "-")
	}
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	namespaces[t] = ns
	t.Cleanup(func() {
		namespacesMu.Lock()
		defer namespacesMu.Unlock()
		delete(namespaces, t)
	})
	return ns
}

// create creates the object in the test's namespace.
func create(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &u.Object))
	u.SetNamespace(namespace(t))
	require.NoError(t, env.Client.Create(context.Background(), u))
	return u
}

func field(t *testing.T, u *unstructured.Unstructured, path ...string) func() string {
	return func() string {
		got := u.DeepCopy()
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, got); err != nil {
			return "error: " + err.Error()
		}
		v, _, _ := unstructured.NestedString(got.Object, path...)
		return v
	}
}

func eventually(t *testing.T, get func() string, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return get() == want }, 15*time.Second, 50*time.Millisecond, "want %s, last %s", want, get())
}

const job = `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: %s, }
spec:
  image: flink:1.20
  flinkConfiguration: {state.savepoints.dir: "file:///sp", %s}
  job: {jarURI: "local:///j.jar", upgradeMode: savepoint, initialSavepointPath: "%s"}
`

func TestJobBecomesStableAndSavepointCarriesOffset(t *testing.T) {
	fd := create(t, fmt.Sprintf(job, "healthy", `a: b`, ""))
	eventually(t, field(t, fd, "status", "lifecycleState"), "STABLE")
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	jobID := field(t, fd, "status", "jobStatus", "jobId")()
	require.Len(t, jobID, 32)

	// The savepoint completes SavepointDelay after it was triggered, after
	// the job started: its offset is positive without waiting here.
	snap := create(t, `
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: healthy-sp, }
spec: {jobReference: {kind: FlinkDeployment, name: healthy}, savepoint: {}}`)
	eventually(t, field(t, snap, "status", "state"), "COMPLETED")
	path := field(t, snap, "status", "path")()
	assert.Contains(t, path, "file:/sp/savepoint-")
	sp, ok := sim.Lineage().Savepoint(path)
	require.True(t, ok)
	assert.Equal(t, jobID, sp.JobID)
	assert.Positive(t, sp.Offset)

	next := create(t, fmt.Sprintf(job, "restored", `a: b`, path[len("file:"):]))
	eventually(t, field(t, next, "status", "jobStatus", "state"), "RUNNING")
	restored, ok := sim.Lineage().Job(field(t, next, "status", "jobStatus", "jobId")())
	require.True(t, ok)
	assert.Equal(t, sp.Offset, restored.StartOffset, "the new job carries the savepoint's offset")
}

func TestFaults(t *testing.T) {
	never := create(t, fmt.Sprintf(job, "never", `"bggitops.dev/simulate-never-ready": "true"`, ""))
	failing := create(t, fmt.Sprintf(job, "failing", `"bggitops.dev/simulate-fail-after": "500ms"`, ""))
	spFail := create(t, fmt.Sprintf(job, "spfail", `"bggitops.dev/simulate-savepoint": "fail"`, ""))
	eventually(t, field(t, failing, "status", "jobStatus", "state"), "FAILED")
	eventually(t, field(t, spFail, "status", "jobStatus", "state"), "RUNNING")
	// never has the same start delay as the two created after it, which
	// both ran: its delay is over, and the simulator left it deploying.
	require.Equal(t, "1", generation(t, never)(), "never was deployed")
	assert.Equal(t, "RECONCILING", field(t, never, "status", "jobStatus", "state")())
	assert.Equal(t, "DEPLOYED", field(t, never, "status", "lifecycleState")())

	snap := create(t, `
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: spfail-sp, }
spec: {jobReference: {kind: FlinkDeployment, name: spfail}, savepoint: {}}`)
	eventually(t, field(t, snap, "status", "state"), "FAILED")
	assert.Equal(t, "simulated savepoint failure", field(t, snap, "status", "error")())
}

// TestSpecErrorFault: a refused spec gets the operator's status.error
// (the JSON of a ValidationException) and is never observed; a first
// deployment is FAILED.
func TestSpecErrorFault(t *testing.T) {
	fd := create(t, fmt.Sprintf(job, "refused", `"bggitops.dev/simulate-spec-error": "Forbidden Flink config key: x"`, ""))
	eventually(t, field(t, fd, "status", "lifecycleState"), "FAILED")
	assert.JSONEq(t, `{"type":"org.apache.flink.kubernetes.operator.exception.ValidationException",`+
		`"message":"Forbidden Flink config key: x","additionalMetadata":{},"throwableList":[]}`, field(t, fd, "status", "error")())
	assert.Equal(t, "0", generation(t, fd)(), "a refused spec is not observed")
}

func TestSuspendAndDeletionFinalizer(t *testing.T) {
	ctx := context.Background()
	fd := create(t, fmt.Sprintf(job, "suspendme", `a: b`, ""))
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Namespace: fd.GetNamespace(), Name: "suspendme"}, fd))
	require.NoError(t, unstructured.SetNestedField(fd.Object, "suspended", "spec", "job", "state"))
	require.NoError(t, env.Client.Update(ctx, fd))
	eventually(t, field(t, fd, "status", "lifecycleState"), "SUSPENDED")
	assert.NotEmpty(t, field(t, fd, "status", "jobStatus", "upgradeSavepointPath")(), "a stateful suspend takes a savepoint")

	require.NoError(t, env.Client.Delete(ctx, fd))
	eventually(t, field(t, fd, "metadata", "name"), "error: flinkdeployments.flink.apache.org \"suspendme\" not found")
}

func generation(t *testing.T, u *unstructured.Unstructured) func() string {
	return func() string {
		got := u.DeepCopy()
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, got); err != nil {
			return "error: " + err.Error()
		}
		v, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		return fmt.Sprint(v)
	}
}

// respec changes a FlinkDeployment's spec, retrying when the simulator's
// status updates got in between.
func respec(t *testing.T, u *unstructured.Unstructured, change func(obj map[string]any)) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, u); err != nil {
			return err
		}
		change(u.Object)
		return env.Client.Update(context.Background(), u)
	}))
}

func setImage(image string) func(map[string]any) {
	return func(obj map[string]any) { _ = unstructured.SetNestedField(obj, image, "spec", "image") }
}

func TestObserveDelayKeepsTheOldStatus(t *testing.T) {
	const delay = time.Second
	fd := create(t, fmt.Sprintf(job, "slowobserver", `"bggitops.dev/simulate-observe-delay": "1s"`, ""))
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	oldJob := field(t, fd, "status", "jobStatus", "jobId")()

	changed := time.Now()
	respec(t, fd, setImage("flink:1.20.1"))
	assert.Equal(t, "1", generation(t, fd)(), "the new generation is not observed yet")
	assert.Equal(t, "STABLE", field(t, fd, "status", "lifecycleState")())
	assert.Equal(t, "RUNNING", field(t, fd, "status", "jobStatus", "state")())
	assert.Equal(t, oldJob, field(t, fd, "status", "jobStatus", "jobId")())

	eventually(t, generation(t, fd), "2")
	assert.GreaterOrEqual(t, time.Since(changed), delay, "observed only after the delay")
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	assert.NotEqual(t, oldJob, field(t, fd, "status", "jobStatus", "jobId")())
}

func TestInitialSavepointIsTheUpgradeSavepointUntilTheJobRuns(t *testing.T) {
	src := create(t, fmt.Sprintf(job, "spsource", `a: b`, ""))
	eventually(t, field(t, src, "status", "jobStatus", "state"), "RUNNING")
	snap := create(t, `
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: spsource-sp, }
spec: {jobReference: {kind: FlinkDeployment, name: spsource}, savepoint: {}}`)
	eventually(t, field(t, snap, "status", "state"), "COMPLETED")
	path := field(t, snap, "status", "path")()
	sp, ok := sim.Lineage().Savepoint(path)
	require.True(t, ok)
	require.Positive(t, sp.Offset)

	stuck := create(t, fmt.Sprintf(job, "stuck", `"bggitops.dev/simulate-never-ready": "true"`, path))
	paused := create(t, fmt.Sprintf(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: paused, }
spec:
  image: flink:1.20
  flinkConfiguration: {state.savepoints.dir: "file:///sp"}
  job: {jarURI: "local:///j.jar", upgradeMode: savepoint, initialSavepointPath: "%s", state: suspended}
`, path))
	eventually(t, field(t, paused, "status", "lifecycleState"), "SUSPENDED")
	eventually(t, field(t, stuck, "status", "jobStatus", "state"), "RECONCILING")
	eventually(t, field(t, stuck, "status", "jobStatus", "upgradeSavepointPath"), path)

	respec(t, stuck, func(obj map[string]any) {
		_ = unstructured.SetNestedField(obj, "flink:1.20.1", "spec", "image")
		unstructured.RemoveNestedField(obj, "spec", "flinkConfiguration", "bggitops.dev/simulate-never-ready")
	})
	respec(t, paused, func(obj map[string]any) { _ = unstructured.SetNestedField(obj, "running", "spec", "job", "state") })
	for _, fd := range []*unstructured.Unstructured{stuck, paused} {
		eventually(t, generation(t, fd), "2")
		eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
		restored, ok := sim.Lineage().Job(field(t, fd, "status", "jobStatus", "jobId")())
		require.True(t, ok)
		assert.Equal(t, path, restored.RestoredFrom, "%s restores from its initial savepoint", fd.GetName())
		assert.Equal(t, sp.Offset, restored.StartOffset, "%s carries the savepoint's offset", fd.GetName())
	}
}

func TestFlappingJobKeepsItsOffset(t *testing.T) {
	const period = 800 * time.Millisecond
	fd := create(t, fmt.Sprintf(job, "flapping", `"bggitops.dev/simulate-flap": "800ms"`, ""))
	var jobs []flinksim.Job
	for range 2 {
		eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
		assert.Equal(t, "STABLE", field(t, fd, "status", "lifecycleState")())
		j, ok := sim.Lineage().Job(field(t, fd, "status", "jobStatus", "jobId")())
		require.True(t, ok)
		jobs = append(jobs, j)
		eventually(t, field(t, fd, "status", "jobStatus", "state"), "FAILED")
		assert.Equal(t, "FAILED", field(t, fd, "status", "lifecycleState")())
	}
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	last, ok := sim.Lineage().Job(field(t, fd, "status", "jobStatus", "jobId")())
	require.True(t, ok)
	jobs = append(jobs, last)

	assert.Zero(t, jobs[0].StartOffset, "the first job starts fresh")
	for i := 1; i < len(jobs); i++ {
		cp, ok := sim.Lineage().Savepoint(jobs[i].RestoredFrom)
		require.True(t, ok, "job %d restored from a recorded checkpoint", i)
		assert.Equal(t, jobs[i-1].ID, cp.JobID, "job %d restored from the job that failed", i)
		assert.Equal(t, cp.Offset, jobs[i].StartOffset)
		assert.GreaterOrEqual(t, jobs[i].StartOffset, jobs[i-1].StartOffset+period.Milliseconds()*flinksim.RecordsPerSecond/1000,
			"job %d carries the offset of the run before the flap", i)
	}
}

// TestSavepointDelayFault: FaultSavepointDelay sets how long a savepoint of
// that job takes, as the simulator records it (trigger to result), and a
// long one keeps the savepoint IN_PROGRESS while one of a job without the
// fault, triggered later, completes.
func TestSavepointDelayFault(t *testing.T) {
	slow := create(t, fmt.Sprintf(job, "spslow", `"bggitops.dev/simulate-savepoint-delay": "1s"`, ""))
	held := create(t, fmt.Sprintf(job, "spheld", `"bggitops.dev/simulate-savepoint-delay": "1h"`, ""))
	plain := create(t, fmt.Sprintf(job, "spplain", `a: b`, ""))
	for _, fd := range []*unstructured.Unstructured{slow, held, plain} {
		eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	}
	snapshot := func(name, jobName string) *unstructured.Unstructured {
		return create(t, fmt.Sprintf(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: %s}
spec: {jobReference: {kind: FlinkDeployment, name: %s}, savepoint: {}}`, name, jobName))
	}

	slowSnap := snapshot("spslow-sp", "spslow")
	eventually(t, field(t, slowSnap, "status", "state"), "COMPLETED")
	triggered, err := time.Parse(time.RFC3339Nano, field(t, slowSnap, "status", "triggerTimestamp")())
	require.NoError(t, err)
	done, err := time.Parse(time.RFC3339Nano, field(t, slowSnap, "status", "resultTimestamp")())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, done.Sub(triggered), time.Second, "the savepoint took the job's savepoint delay")

	heldSnap := snapshot("spheld-sp", "spheld")
	eventually(t, field(t, heldSnap, "status", "state"), "IN_PROGRESS")
	plainSnap := snapshot("spplain-sp", "spplain")
	eventually(t, field(t, plainSnap, "status", "state"), "COMPLETED")
	assert.Equal(t, "IN_PROGRESS", field(t, heldSnap, "status", "state")(),
		"triggered first, with the same default delay over, it waits for its own")
}

// TestSavepointFaultTimes: FaultSavepointTimes limits a savepoint fault to
// the first savepoints of the FlinkDeployment; later ones complete.
func TestSavepointFaultTimes(t *testing.T) {
	failing := create(t, fmt.Sprintf(job, "sponce", `"bggitops.dev/simulate-savepoint": "fail", "bggitops.dev/simulate-savepoint-times": "1"`, ""))
	hanging := create(t, fmt.Sprintf(job, "sphangonce", `"bggitops.dev/simulate-savepoint": "hang", "bggitops.dev/simulate-savepoint-times": "1"`, ""))
	for _, fd := range []*unstructured.Unstructured{failing, hanging} {
		eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	}
	snapshot := func(name, jobName string) *unstructured.Unstructured {
		return create(t, fmt.Sprintf(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: %s}
spec: {jobReference: {kind: FlinkDeployment, name: %s}, savepoint: {}}`, name, jobName))
	}
	eventually(t, field(t, snapshot("sponce-1", "sponce"), "status", "state"), "FAILED")
	eventually(t, field(t, snapshot("sponce-2", "sponce"), "status", "state"), "COMPLETED")
	held := snapshot("sphangonce-1", "sphangonce")
	eventually(t, field(t, held, "status", "state"), "IN_PROGRESS")
	eventually(t, field(t, snapshot("sphangonce-2", "sphangonce"), "status", "state"), "COMPLETED")
	assert.Equal(t, "IN_PROGRESS", field(t, held, "status", "state")(), "the first one still hangs")
}

// TestSnapshotControllerOffFault: a FlinkStateSnapshot of a job with
// FaultSnapshotControllerOff gets no status at all, as with an operator
// whose snapshot controller is off, while the job runs on and a snapshot
// of another job, created after it, completes.
func TestSnapshotControllerOffFault(t *testing.T) {
	off := create(t, fmt.Sprintf(job, "spoff", `"`+flinksim.FaultSnapshotControllerOff+`": "true"`, ""))
	plain := create(t, fmt.Sprintf(job, "spon", `a: b`, ""))
	for _, fd := range []*unstructured.Unstructured{off, plain} {
		eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	}
	snapshot := func(name, jobName string) *unstructured.Unstructured {
		return create(t, fmt.Sprintf(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: %s}
spec: {jobReference: {kind: FlinkDeployment, name: %s}, savepoint: {}}`, name, jobName))
	}
	ignored := snapshot("spoff-sp", "spoff")
	eventually(t, field(t, snapshot("spon-sp", "spon"), "status", "state"), "COMPLETED")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ignored.GroupVersionKind())
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ignored.GetNamespace(), Name: ignored.GetName()}, u))
	assert.NotContains(t, u.Object, "status")
	assert.Empty(t, u.GetFinalizers())
	assert.Equal(t, "RUNNING", field(t, off, "status", "jobStatus", "state")())
}
