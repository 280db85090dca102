/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package testenv_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start(testenv.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

var namespaces atomic.Int32

// newNamespace creates a namespace of the test's own, unique per run, so that
// the tests pass with -count=2 on the one control plane of the package.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", namespaces.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	return name
}

// object builds an unstructured object so that invalid specs reach the API
// server instead of failing in a Go type.
func object(ns, kind, name, spec string) *unstructured.Unstructured {
	m := map[string]any{}
	must(yaml.Unmarshal([]byte(spec), &m))
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "bggitops.dev/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": m}}
}

func gitRepository(ns, name, spec string) *unstructured.Unstructured {
	return object(ns, "GitRepository", name, spec)
}

func fbgd(ns, name, spec string) *unstructured.Unstructured {
	return object(ns, "FlinkBlueGreenDeployment", name, spec)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

const validFBGD = `
configuration:
  kubernetes.operator.bluegreen.abort.grace-period: "5 min"
promotion: {mode: Manual}
template:
  spec:
    image: flink:1.20
    flinkVersion: v1_20
    flinkConfiguration: {parallelism.default: 2, state.savepoints.dir: "file:///sp"}
    jobManager: {resource: {memory: 2048m, cpu: 1}}
    taskManager: {resource: {memory: 2048m, cpu: 1}}
    job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

func TestValidObjectsAccepted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	gr := gitRepository(ns, "valid", `{url: "https://example.test/org/repo.git", ref: {semver: ">=1.0.0"}, schedule: "CRON_TZ=Europe/Berlin 0 * * * *",
		commitStatus: {provider: gitea, address: "http://127.0.0.1:3000", repository: "org/repo", secretRef: {name: t}},
		rolloutWindows: [{schedule: "0 2 * * *", duration: 2h, timeZone: Europe/Berlin}]}`)
	require.NoError(t, env.Client.Create(ctx, gr))
	defaulted := &v1alpha1.GitRepository{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "valid"}, defaulted))
	assert.Equal(t, "./", defaulted.Spec.Path)
	assert.Equal(t, time.Minute, defaulted.Spec.Timeout.Duration)
	assert.True(t, *defaulted.Spec.Prune)

	minimal := gitRepository(ns, "minimal", `{url: "file:///srv/repo"}`)
	require.NoError(t, env.Client.Create(ctx, minimal))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "minimal"}, defaulted))
	assert.Equal(t, "main", defaulted.Spec.Ref.Branch, "ref defaults to the branch main")

	require.NoError(t, env.Client.Create(ctx, fbgd(ns, "valid", validFBGD)))
	got := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "valid"}, got))
	assert.Equal(t, "savepoint", got.Spec.Template.Spec.Job.UpgradeMode)
	assert.Contains(t, string(got.Spec.Template.Spec.FlinkConfiguration.Raw), "parallelism.default")
}

func TestInvalidObjectsRejected(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	cases := []struct {
		name, want string
		obj        client.Object
	}{
		{"interval and schedule", "set interval or schedule, not both",
			gitRepository(ns, "both", `{url: "https://h/r.git", interval: 1m, schedule: "* * * * *"}`)},
		{"unsupported scheme", `spec.url in body should match '^(https?|ssh|file)://.+$'`,
			gitRepository(ns, "scheme", `{url: "ftp://h/r.git"}`)},
		{"two ref kinds", "set exactly one of branch, tag, semver, commit, name",
			gitRepository(ns, "refs", `{url: "https://h/r.git", ref: {branch: main, tag: v1}}`)},
		{"bad interval", "spec.interval in body should match",
			gitRepository(ns, "interval", `{url: "https://h/r.git", interval: "soon"}`)},
		{"interval of 1ms", "spec.interval: Invalid value: \"1ms\": interval must be at least 10s",
			gitRepository(ns, "interval-1ms", `{url: "https://h/r.git", interval: 1ms}`)},
		{"interval just under the bound", "interval must be at least 10s",
			gitRepository(ns, "interval-9s", `{url: "https://h/r.git", interval: 9.9s}`)},
		{"timeout of 1ms", "spec.timeout: Invalid value: \"1ms\": timeout must be between 1s and 5m",
			gitRepository(ns, "timeout-1ms", `{url: "https://h/r.git", timeout: 1ms}`)},
		{"timeout of an hour", "timeout must be between 1s and 5m",
			gitRepository(ns, "timeout-1h", `{url: "https://h/r.git", timeout: 1h}`)},
		{"@every schedule of 1s", "spec.schedule: Invalid value: \"@every 1s\": an @every schedule must be at least 10s",
			gitRepository(ns, "every-1s", `{url: "https://h/r.git", schedule: "@every 1s"}`)},
		{"@every schedule with a zone", "an @every schedule must be at least 10s",
			gitRepository(ns, "every-tz", `{url: "https://h/r.git", schedule: "CRON_TZ=UTC @every 500ms"}`)},
		{"unknown promotion mode", `Unsupported value: "Sometimes"`,
			fbgd(ns, "promo", strings.Replace(validFBGD, "Manual", "Sometimes", 1))},
		{"template without job", "spec.template.spec.job: Required value",
			fbgd(ns, "nojob", `{template: {spec: {image: flink:1.20}}}`)},
		{"upper-case upgrade mode", `Unsupported value: "SAVEPOINT"`,
			fbgd(ns, "upper", strings.Replace(validFBGD, "upgradeMode: savepoint", "upgradeMode: SAVEPOINT", 1))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.obj)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDurationBounds: the bounds of interval, timeout and @every schedules
// are those of the API types, inclusive.
func TestDurationBounds(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	for name, spec := range map[string]string{
		"bounds-min":    fmt.Sprintf(`{url: "https://h/r.git", interval: %s, timeout: %s}`, v1alpha1.MinInterval, v1alpha1.MinTimeout),
		"bounds-max":    fmt.Sprintf(`{url: "https://h/r.git", interval: 24h, timeout: %s}`, v1alpha1.MaxTimeout),
		"bounds-every":  fmt.Sprintf(`{url: "https://h/r.git", schedule: "@every %s"}`, v1alpha1.MinInterval),
		"bounds-hourly": `{url: "https://h/r.git", schedule: "CRON_TZ=Europe/Berlin @hourly"}`,
	} {
		require.NoError(t, env.Client.Create(ctx, gitRepository(ns, name, spec)), name)
	}
}

func TestKubectlPrinterColumns(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	require.NoError(t, env.Client.Create(ctx, gitRepository(ns, "columns", `{url: "https://h/cols.git"}`)))
	require.NoError(t, env.Client.Create(ctx, fbgd(ns, "columns", validFBGD)))
	out, err := exec.Command(env.BinDir+"/kubectl", "--kubeconfig", env.Kubeconfig,
		"get", "bggr,fbgd", "-n", ns).CombinedOutput()
	require.NoError(t, err, string(out))
	for _, col := range []string{"URL", "REVISION", "READY", "STATUS", "AGE", "STATE", "JOB", "ACTIVE", "TARGET"} {
		assert.Contains(t, string(out), col)
	}
	assert.Contains(t, string(out), "https://h/cols.git")
}

func TestFlinkTestCRDsAcceptChildFields(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	fd := &unstructured.Unstructured{}
	must(yaml.Unmarshal([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: child-blue, labels: {flink/blue-green-deployment-type: BLUE}}
spec:
  image: flink:1.20
  flinkVersion: v1_20
  mode: native
  flinkConfiguration: {parallelism.default: "2"}
  job: {jarURI: "local:///j.jar", upgradeMode: savepoint, state: running, initialSavepointPath: /sp/savepoint-1, parallelism: 2}
`), &fd.Object))
	fd.SetNamespace(ns)
	require.NoError(t, env.Client.Create(ctx, fd))
	fd.Object["status"] = map[string]any{"lifecycleState": "STABLE", "jobManagerDeploymentStatus": "READY",
		"jobStatus": map[string]any{"state": "RUNNING", "jobId": "abc", "upgradeSavepointPath": "/sp/1"}}
	require.NoError(t, env.Client.Status().Update(ctx, fd))
	fd.Object["spec"].(map[string]any)["job"].(map[string]any)["state"] = "SUSPENDED"
	assert.Error(t, env.Client.Update(ctx, fd), "upper-case job.state is rejected as by the real CRD")

	snap := &unstructured.Unstructured{}
	must(yaml.Unmarshal([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: snap}
spec: {jobReference: {kind: FlinkDeployment, name: child-blue}, savepoint: {formatType: CANONICAL, disposeOnDelete: false}}
`), &snap.Object))
	snap.SetNamespace(ns)
	require.NoError(t, env.Client.Create(ctx, snap))
	snap.Object["status"] = map[string]any{"state": "COMPLETED", "path": "/sp/savepoint-1"}
	require.NoError(t, env.Client.Status().Update(ctx, snap))
}

func TestNamespaceCreate(t *testing.T) {
	// A smoke test that the administrator client can write core objects.
	ns := newNamespace(t)
	got := &corev1.Namespace{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, got))
}
