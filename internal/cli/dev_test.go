/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops dev`, run as `make demo` users run it.

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/devenv"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// lookAround is what `bg-gitops dev` prints once the environment runs:
// where everything is and how to push a change yourself.
type lookAround struct {
	dir, kubeconfig, kubectl string
	giteaURL, user, password string
	repository, cloneURL     string
	sedExpr, patchFile       string
}

var lookAroundPatterns = map[string]*regexp.Regexp{
	"dir":        regexp.MustCompile(`Ctrl-C stops everything and removes (\S+)\)`),
	"kubeconfig": regexp.MustCompile(`export KUBECONFIG=(\S+)`),
	"kubectl":    regexp.MustCompile(`\n\s+(\S+) get bggr,fbgd -A`),
	"gitea":      regexp.MustCompile(`Gitea\s+(\S+)\s+\(login (\S+) / (\S+)\)`),
	"commits":    regexp.MustCompile(`commits\s+(\S+)/commits/branch/main`),
	"clone":      regexp.MustCompile(`git clone (\S+) /tmp/fraud-detection`),
	"sed":        regexp.MustCompile(`sed -i '([^']+)' /tmp/fraud-detection/(\S+)`),
}

func parseLookAround(t *testing.T, out string) lookAround {
	t.Helper()
	m := map[string][]string{}
	for k, re := range lookAroundPatterns {
		m[k] = re.FindStringSubmatch(out)
		require.NotNil(t, m[k], "the look-around text has no %s:\n%s", k, out)
	}
	l := lookAround{dir: m["dir"][1], kubeconfig: m["kubeconfig"][1], kubectl: m["kubectl"][1],
		giteaURL: m["gitea"][1], user: m["gitea"][2], password: m["gitea"][3],
		cloneURL: m["clone"][1], sedExpr: m["sed"][1], patchFile: m["sed"][2]}
	l.repository = strings.TrimPrefix(strings.TrimPrefix(m["commits"][1], l.giteaURL), "/")
	return l
}

// TestDevEnvironment runs `bg-gitops dev` as `make demo` users do without
// --scenario, follows the instructions it prints (kubectl, Gitea, a push of
// one's own), then stops it with Ctrl-C (SIGINT) and checks that
// everything it started is gone.
func TestDevEnvironment(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	dev := startProcess(t, "bg-gitops dev", "dev")
	dev.until(t, 4*time.Minute, "the look-around text", func() bool { return strings.Contains(dev.output(), "── look around") })
	l := parseLookAround(t, dev.output())
	assert.Contains(t, dev.output(), "environment ready in")

	// The printed kubectl command shows the GitRepository and the job.
	kubectl := exec.Command(l.kubectl, "get", "bggr,fbgd", "-A")
	kubectl.Env = append(os.Environ(), "KUBECONFIG="+l.kubeconfig)
	out, err := kubectl.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), devenv.GitRepositoryName)
	assert.Contains(t, string(out), devenv.JobName)

	cfg := restConfigFromKubeconfig(t, l.kubeconfig)
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	work := filepath.Join(t.TempDir(), "fraud-detection")
	devGit(t, "", "clone", "--quiet", l.cloneURL, work)
	seed := devGit(t, work, "rev-parse", "HEAD")

	// The seeded commit is applied and deployed, and its statuses are on
	// the commit in Gitea.
	seedRev := "main@sha1:" + seed
	dev.until(t, 2*time.Minute, "the seed deployed", func() bool {
		gr, p := devObjects(t, c)
		return gr != nil && p != nil && meta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition) &&
			gr.Status.LastAppliedRevision == seedRev &&
			p.Status.BlueGreenState == v1alpha1.ActiveBlue && p.Status.JobStatus.State == v1alpha1.JobRunning &&
			p.Status.ActiveRevision == seedRev
	})
	dev.until(t, time.Minute, "sync and rollout success on the seed commit in Gitea", func() bool {
		return giteaStatus(t, l, seed, status.SyncContext(devenv.SourceNamespace, devenv.GitRepositoryName)) == "success" &&
			giteaStatus(t, l, seed, status.RolloutContext(devenv.JobNamespace, devenv.JobName)) == "success"
	})

	// Push a change as printed: the webhook reaches the receiver (it
	// annotates the GitRepository: polling alone would not) and the change
	// rolls out blue/green.
	patch := filepath.Join(work, l.patchFile)
	before, err := os.ReadFile(patch)
	require.NoError(t, err)
	sed := exec.Command("sed", "-i", l.sedExpr, patch)
	out, err = sed.CombinedOutput()
	require.NoError(t, err, "%s", out)
	after, err := os.ReadFile(patch)
	require.NoError(t, err)
	require.NotEqual(t, string(before), string(after), "the printed sed changes %s", l.patchFile)
	devGit(t, work, "-c", "user.name=you", "-c", "user.email=you@example.invalid", "commit", "-qam", "staging: parallelism 2")
	devGit(t, work, "push", "--quiet")
	head := devGit(t, work, "rev-parse", "HEAD")
	headRev := "main@sha1:" + head
	dev.until(t, time.Minute, "the push webhook handled", func() bool {
		gr, _ := devObjects(t, c)
		return gr != nil && gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation] != "" &&
			gr.Status.LastHandledReconcileAt == gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
	})
	dev.until(t, 2*time.Minute, "the change rolled out", func() bool {
		_, p := devObjects(t, c)
		return p != nil && p.Status.BlueGreenState == v1alpha1.ActiveGreen && p.Status.JobStatus.State == v1alpha1.JobRunning &&
			p.Status.ActiveRevision == headRev
	})
	green := &unstructured.Unstructured{}
	green.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: devenv.JobNamespace, Name: devenv.JobName + "-green"}, green))
	parallelism, _, _ := unstructured.NestedInt64(green.Object, "spec", "job", "parallelism")
	assert.EqualValues(t, 2, parallelism, "green runs the pushed spec")
	dev.until(t, time.Minute, "rollout success on the pushed commit in Gitea", func() bool {
		return giteaStatus(t, l, head, status.RolloutContext(devenv.JobNamespace, devenv.JobName)) == "success"
	})

	// Ctrl-C stops everything it started and removes its directory.
	require.NoError(t, dev.stop(syscall.SIGINT, 90*time.Second), "bg-gitops dev stops within 90s of Ctrl-C")
	assert.Equal(t, 0, dev.exitCode, "exit code after Ctrl-C")
	assert.Contains(t, dev.output(), "stopping: controller, gitea, kube-apiserver, etcd; removing "+l.dir)
	_, err = os.Stat(l.dir)
	assert.True(t, os.IsNotExist(err), "%s removed: %v", l.dir, err)
	code, _ := httpGet(l.giteaURL + "/api/v1/version")
	assert.Zero(t, code, "Gitea no longer answers")
	_, err = probeClient.Get(cfg.Host)
	assert.Error(t, err, "the API server no longer answers")
	assert.Empty(t, processesMentioning(t, l.dir), "no process left that runs from %s", l.dir)
}

func devObjects(t *testing.T, c client.Client) (*v1alpha1.GitRepository, *v1alpha1.FlinkBlueGreenDeployment) {
	t.Helper()
	ctx := context.Background()
	gr := &v1alpha1.GitRepository{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: devenv.SourceNamespace, Name: devenv.GitRepositoryName}, gr); err != nil {
		return nil, nil
	}
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: devenv.JobNamespace, Name: devenv.JobName}, p); err != nil {
		return gr, nil
	}
	return gr, p
}

// giteaStatus is the newest state of a commit status context on sha, read
// from Gitea's API as the printed login; "" when there is none.
func giteaStatus(t *testing.T, l lookAround, sha, context string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/repos/%s/commits/%s/statuses?limit=50", l.giteaURL, l.repository, sha), nil)
	require.NoError(t, err)
	req.SetBasicAuth(l.user, l.password)
	resp, err := probeClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "statuses of %s", sha)
	var list []gitea.Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	// The newest is the one with the highest id (the API's order is not
	// by time).
	var newest gitea.Status
	for _, s := range list {
		if s.Context == context && s.ID > newest.ID {
			newest = s
		}
	}
	return newest.State
}

func devGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", args[0], out)
	return strings.TrimSpace(string(out))
}

// processesMentioning lists the processes whose command line contains s.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.Trim(e.Name(), "0123456789") != "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}
