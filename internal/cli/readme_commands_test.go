/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests that run the commands of README.md and docs/ as they are written.

package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// readmeNamespace stands for the docs' namespace flink (a name of its
// own, so that no other test of the shared cluster meets it).
const readmeNamespace = "flink-readme"

// readmeShell runs a shell command line of the docs with bin/kubectl first
// on PATH and the test cluster's kubeconfig, in dir, and returns its
// standard output.
func readmeShell(t *testing.T, env *testenv.Env, dir, line string) string {
	t.Helper()
	cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "PATH="+env.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s: %s", line, stderr.String())
	return string(out)
}

// TestReadmeCommands runs the commands of README.md, docs/install.md,
// docs/getting-started.md and docs/cli.md that no other test runs with
// the docs' own flags, against the test control plane (no kind
// cluster, no kubelet, the Flink operator simulated): the tenant
// onboarding with kubectl, the Secrets and the webhook token read back
// with kubectl, a first rollout gated by `wait gitrepository
// --for-revision <hash> --rollouts`, abort and retry without --wait,
// promote --wait, `wait fbgd --for-revision HEAD` from the checkout, the
// savepoints listed by label, and build and diff in a clone against
// origin/main.
func TestReadmeCommands(t *testing.T) {
	env := cluster(t)
	ctx := context.Background()
	ns := readmeNamespace
	work := t.TempDir()

	t.Run("onboard a namespace", func(t *testing.T) {
		readmeShell(t, env, work, "kubectl create namespace "+ns)
		// (cd config/tenant && kustomize edit set namespace flink) &&
		// kubectl apply -k config/tenant, on a copy of config/tenant: the
		// edit is what kustomize edit set namespace writes (no kustomize
		// binary here).
		tenant := filepath.Join(work, "config", "tenant")
		require.NoError(t, copyTree(filepath.Join("..", "..", "config", "tenant"), tenant))
		k := filepath.Join(tenant, "kustomization.yaml")
		b, err := os.ReadFile(k)
		require.NoError(t, err)
		require.Contains(t, string(b), "\nnamespace: tenant\n")
		require.NoError(t, os.WriteFile(k, []byte(strings.Replace(string(b), "\nnamespace: tenant\n", "\nnamespace: "+ns+"\n", 1)), 0o644))
		readmeShell(t, env, work, "kubectl apply -k config/tenant")
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "bg-gitops-applier"}, &corev1.ServiceAccount{}))
		rb := &rbacv1.RoleBinding{}
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "bg-gitops-applier"}, rb))
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "bg-gitops-applier"}, rb.RoleRef)
		require.Len(t, rb.Subjects, 1)
		assert.Equal(t, "bg-gitops-applier", rb.Subjects[0].Name)

		// The Helm section's label (on this namespace, not bg-gitops-system).
		readmeShell(t, env, work, "kubectl label namespace "+ns+" pod-security.kubernetes.io/enforce=restricted")
		n := &corev1.Namespace{}
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: ns}, n))
		assert.Equal(t, "restricted", n.Labels["pod-security.kubernetes.io/enforce"])
	})

	t.Run("secrets and the webhook token", func(t *testing.T) {
		// < token.txt and < forge-token.txt: files ending in a newline.
		res := runCLIInput(t, "s3cret-token\n", "create", "secret", "git", "git-auth", "-n", ns, "--username", "bot", "--password", "-", "--kubeconfig", env.Kubeconfig)
		require.Equal(t, 0, res.code, res.stderr)
		sec := readSecret(t, env, ns, "git-auth")
		assert.Equal(t, "bot", string(sec.Data["username"]))
		assert.Equal(t, "s3cret-token", string(sec.Data["password"]))
		res = runCLIInput(t, "ghp_forgeToken123\n", "create", "secret", "forge", "forge-token", "-n", ns, "--token", "-", "--kubeconfig", env.Kubeconfig)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Equal(t, "ghp_forgeToken123", string(readSecret(t, env, ns, "forge-token").Data["token"]))
		res = runCLI(t, "create", "secret", "webhook", "webhook", "-n", ns, "--kubeconfig", env.Kubeconfig)
		require.Equal(t, 0, res.code, res.stderr)

		token := readmeShell(t, env, work, "kubectl -n "+ns+" get secret webhook -o jsonpath='{.data.token}' | base64 -d")
		assert.Regexp(t, "^[0-9a-f]{64}$", token)
		assert.Equal(t, string(readSecret(t, env, ns, "webhook").Data["token"]), token)
	})

	t.Run("first rollout, abort, retry, promote, wait", func(t *testing.T) {
		kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
		r := &prRepo{dir: filepath.Join(work, "flink-jobs"), t: t}
		require.NoError(t, os.MkdirAll(r.dir, 0o755))
		r.git("init", "-q", "-b", "main")
		r.write("overlays/production/kustomization.yaml", "namespace: "+ns+"\nresources: [orders.yaml]\n")
		orders := strings.Replace(manualFBGD, "  name: job\n", "  name: orders\n", 1)
		orders = strings.Replace(orders, "  annotations: {bggitops.dev/revision: \"main@sha1:0000000000000000000000000000000000000001\"}\n", "", 1)
		r.write("overlays/production/orders.yaml", orders)
		r.commit("orders")
		// kubectl apply -f gitrepository.yaml (the docs', pointed at
		// this repository, without the Secrets of a real forge)
		require.NoError(t, os.WriteFile(filepath.Join(work, "gitrepository.yaml"), []byte(fmt.Sprintf(`apiVersion: bggitops.dev/v1alpha1
kind: GitRepository
metadata: {name: jobs, namespace: %s}
spec:
  url: file://%s
  ref: {branch: main}
  path: ./overlays/production
  interval: 1h
`, ns, r.dir)), 0o644))
		readmeShell(t, env, work, "kubectl apply -f gitrepository.yaml")

		// bg-gitops wait gitrepository jobs -n flink --for-revision "$(git rev-parse HEAD)" --rollouts
		head := r.git("rev-parse", "HEAD")
		res := runCLI(t, append([]string{"wait", "gitrepository", "jobs", "--for-revision", head, "--rollouts"}, kc...)...)
		require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
		assert.Equal(t, "fbgd "+ns+"/orders: "+head[:12]+" is live on orders-blue, job RUNNING", lastLine(res.stdout))

		// bg-gitops get fbgd -n flink
		res = runCLI(t, append([]string{"get", "fbgd"}, kc...)...)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Regexp(t, `(?m)^orders\s+ACTIVE_BLUE\s+RUNNING`, res.stdout)

		// A new image: bg-gitops reconcile gitrepository jobs -n flink --wait
		r.replace("overlays/production/orders.yaml", "image: flink:1.20.0", "image: flink:1.20.1")
		head = r.commit("image flink:1.20.1")
		res = runCLI(t, append([]string{"reconcile", "gitrepository", "jobs", "--wait"}, kc...)...)
		require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
		greenRuns := func() bool {
			c, ok := flinkChild(env, ns, "orders-green")
			return ok && c.GetDeletionTimestamp() == nil && nestedString(c, "spec", "image") == "flink:1.20.1" &&
				nestedString(c, "spec", "job", "state") != "suspended" && nestedString(c, "status", "jobStatus", "state") == "RUNNING"
		}
		eventually(t, "orders-green runs beside orders-blue", greenRuns)
		assert.Equal(t, v1alpha1.TransitioningToGreen, getFBGD(t, env, ns, "orders").Status.BlueGreenState, "waits for promote")

		// bg-gitops abort fbgd orders -n flink
		res = runCLI(t, append([]string{"abort", "fbgd", "orders"}, kc...)...)
		require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
		eventually(t, "the abort handled: orders-blue keeps running", func() bool {
			p := getFBGD(t, env, ns, "orders")
			return p.Annotations[v1alpha1.AbortRequestedAtAnnotation] != "" &&
				p.Status.LastHandledAbortAt == p.Annotations[v1alpha1.AbortRequestedAtAnnotation] &&
				p.Status.BlueGreenState == v1alpha1.ActiveBlue && p.Status.JobStatus.State == v1alpha1.JobFailing
		})

		// bg-gitops retry fbgd orders -n flink
		res = runCLI(t, append([]string{"retry", "fbgd", "orders"}, kc...)...)
		require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
		eventually(t, "the retry handled: a new transition to orders-green", func() bool {
			p := getFBGD(t, env, ns, "orders")
			return p.Annotations[v1alpha1.RetryRequestedAtAnnotation] != "" &&
				p.Status.LastHandledRetryAt == p.Annotations[v1alpha1.RetryRequestedAtAnnotation] &&
				p.Status.BlueGreenState == v1alpha1.TransitioningToGreen
		})
		eventually(t, "orders-green runs again", greenRuns)

		// bg-gitops promote fbgd orders -n flink --wait
		res = runCLI(t, append([]string{"promote", "fbgd", "orders", "--wait"}, kc...)...)
		require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
		assert.Contains(t, lastLine(res.stdout), "fbgd "+ns+"/orders: ACTIVE_GREEN, job RUNNING")

		// bg-gitops wait fbgd orders -n flink --for-revision HEAD, in the checkout.
		t.Chdir(r.dir)
		res = runCLI(t, append([]string{"wait", "fbgd", "orders", "--for-revision", "HEAD"}, kc...)...)
		require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
		assert.Contains(t, lastLine(res.stdout), "fbgd "+ns+"/orders: "+head[:12])
		assert.Contains(t, lastLine(res.stdout), "orders-green")

		// kubectl get flinkstatesnapshots -l bggitops.dev/flinkbluegreendeployment=orders
		out := readmeShell(t, env, r.dir, "kubectl -n "+ns+" get flinkstatesnapshots -l bggitops.dev/flinkbluegreendeployment=orders -o name")
		assert.NotEmpty(t, strings.TrimSpace(out), "the savepoints of orders")
	})

	t.Run("build and diff in a clone", func(t *testing.T) {
		// A checkout of examples/repo-layout whose origin/main is the
		// example and whose HEAD changes the production image.
		upstream := newPRRepo(t)
		upstream.git("checkout", "-q", "main")
		clone := &prRepo{dir: filepath.Join(t.TempDir(), "flink-jobs"), t: t}
		upstream.git("clone", "-q", upstream.dir, clone.dir)
		clone.git("checkout", "-q", "-b", "new-image")
		clone.replace(fbgdPatch, "image: flink:1.20.1-java17", "image: flink:1.20.2-java17")
		clone.commit("production: flink 1.20.2")
		t.Chdir(clone.dir)

		// bg-gitops build --repo . --path overlays/production
		res := runCLI(t, "build", "--repo", ".", "--path", "overlays/production")
		require.Equal(t, 0, res.code, res.stderr)
		assert.Contains(t, res.stdout, "kind: FlinkBlueGreenDeployment")
		assert.Contains(t, res.stdout, "namespace: flink-production")
		assert.Contains(t, res.stdout, "image: flink:1.20.2-java17")

		// bg-gitops diff --repo . --base origin/main --head HEAD --path overlays/production --format markdown
		res = runCLI(t, "diff", "--repo", ".", "--base", "origin/main", "--head", "HEAD", "--path", "overlays/production", "--format", "markdown")
		require.Equal(t, 1, res.code, "exit code 1 = changes; stderr: %s", res.stderr)
		assert.Contains(t, res.stdout, "### bg-gitops diff `overlays/production`")
		assert.Contains(t, res.stdout, "`origin/main`")
		assert.Contains(t, res.stdout, "| `flink-production/state-machine` | **blue/green transition with savepoint**; not checked against a cluster | `image` |")
	})
}
