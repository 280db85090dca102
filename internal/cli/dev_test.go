/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops dev`, run as `make demo` users run it.

package cli

import (
	"context"
	"encoding/json"
	"errors"
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
// where everything is, the bg-gitops commands to look with, how to push a
// change yourself and how to try a failure.
type lookAround struct {
	dir, kubeconfig, kubectl string
	giteaURL, user, password string
	repository, clone        string
	// watch, history and check are the printed bg-gitops command lines.
	watch, history, check string
	// push are the lines of "push a change yourself", in order.
	push []string
}

var lookAroundPatterns = map[string]*regexp.Regexp{
	"dir":        regexp.MustCompile(`Ctrl-C stops everything and removes (\S+)\)`),
	"kubeconfig": regexp.MustCompile(`export KUBECONFIG=(\S+)`),
	"kubectl":    regexp.MustCompile(`\n\s+(\S+) get bggr,fbgd -A`),
	"gitea":      regexp.MustCompile(`Gitea\s+(\S+)\s+\(login (\S+) / (\S+)\)`),
	"commits":    regexp.MustCompile(`commits\s+(\S+)/commits/branch/main`),
	"clone":      regexp.MustCompile(`git clone \S+ (\S+)\n`),
	"watch":      regexp.MustCompile(`\n\s+(\S+ get fbgd ` + devenv.JobName + ` -n ` + devenv.JobNamespace + ` --watch)\s`),
	"history":    regexp.MustCompile(`\n\s+(\S+ history fbgd ` + devenv.JobName + ` -n ` + devenv.JobNamespace + `)\s`),
	"check":      regexp.MustCompile(`\n\s+(\S+ check)\s`),
	"push":       regexp.MustCompile(`push a change yourself[^\n]*\n((?:    \S[^\n]*\n)+)`),
}

func parseLookAround(t *testing.T, out string) lookAround {
	t.Helper()
	m := map[string][]string{}
	for k, re := range lookAroundPatterns {
		m[k] = re.FindStringSubmatch(out)
		require.NotNil(t, m[k], "the look-around text has no %s:\n%s", k, out)
	}
	l := lookAround{dir: m["dir"][1], kubeconfig: m["kubeconfig"][1], kubectl: m["kubectl"][1],
		giteaURL: m["gitea"][1], user: m["gitea"][2], password: m["gitea"][3], clone: m["clone"][1],
		watch: m["watch"][1], history: m["history"][1], check: m["check"][1]}
	l.repository = strings.TrimPrefix(strings.TrimPrefix(m["commits"][1], l.giteaURL), "/")
	for _, line := range strings.Split(strings.TrimRight(m["push"][1], "\n"), "\n") {
		l.push = append(l.push, strings.TrimSpace(line))
	}
	return l
}

// pushLine is the printed line of "push a change yourself" that contains s.
func (l lookAround) pushLine(t *testing.T, s string) string {
	t.Helper()
	for _, line := range l.push {
		if strings.Contains(line, s) {
			return line
		}
	}
	t.Fatalf("no line with %q in %q", s, l.push)
	return ""
}

// devShell runs a printed command line with bash, as a user pastes it:
// the environment's kubeconfig exported, and the printed bg-gitops (this
// test binary) running the command line.
func devShell(t *testing.T, l lookAround, line string) result {
	t.Helper()
	cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+l.kubeconfig, cliMainEnv+"=1")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, line)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// TestDevEnvironment runs `bg-gitops dev` as `make demo` users do without
// --scenario, follows the instructions it prints (kubectl, bg-gitops check,
// version, diff, wait and history, Gitea, a push of one's own into a clone
// of its own), checks that the timeline goes on for that push, then stops
// it with Ctrl-C (SIGINT) and checks that everything it started is gone
// and that it said so.
func TestDevEnvironment(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	dev := startProcess(t, "bg-gitops dev", "dev")
	dev.until(t, 4*time.Minute, "the look-around text", func() bool { return strings.Contains(dev.output(), "── look around") })
	l := parseLookAround(t, dev.output())
	assert.Contains(t, dev.output(), "environment ready in")
	assert.True(t, strings.HasPrefix(l.clone, l.dir+string(filepath.Separator)), "the clone %s is under the run's own directory %s", l.clone, l.dir)
	assert.Contains(t, dev.output(), devenv.TryAFailure("  ", l.clone+"/"+devenv.PatchFile), "the banner says how to try a failure")

	// The printed kubectl command shows the GitRepository and the job.
	kubectl := exec.Command(l.kubectl, "get", "bggr,fbgd", "-A")
	kubectl.Env = append(os.Environ(), "KUBECONFIG="+l.kubeconfig)
	out, err := kubectl.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), devenv.GitRepositoryName)
	assert.Contains(t, string(out), devenv.JobName)

	// The controller inside bg-gitops dev is the controller for check and version.
	res := devShell(t, l, l.check)
	assert.Equal(t, 0, res.code, "%s:\n%s%s", l.check, res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "✔ controller "+devenv.ControllerNamespace+"/"+devenv.ControllerDeployment+": 1/1 available")
	assert.Contains(t, res.stdout, "✔ receiver of "+devenv.ControllerNamespace+"/"+devenv.ControllerDeployment)
	res = runCLI(t, "version", "--kubeconfig", l.kubeconfig)
	assert.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "controller: "+cliVersion()+" (image bg-gitops:"+cliVersion()+", deployment "+
		devenv.ControllerNamespace+"/"+devenv.ControllerDeployment+", 1/1 ready)")

	cfg := restConfigFromKubeconfig(t, l.kubeconfig)
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	res = devShell(t, l, l.pushLine(t, "git clone "))
	require.Equal(t, 0, res.code, res.stderr)
	seed := devGit(t, l.clone, "rev-parse", "HEAD")

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

	// Push a change as printed: the edit changes the file, diff names the
	// transition, the webhook reaches the receiver (it annotates the
	// GitRepository: polling alone would not), wait returns once the
	// change rolled out blue/green, and history lists it.
	patch := filepath.Join(l.clone, devenv.PatchFile)
	before, err := os.ReadFile(patch)
	require.NoError(t, err)
	for _, line := range []string{"sed -i ", " commit -qam "} {
		res = devShell(t, l, l.pushLine(t, line))
		require.Equal(t, 0, res.code, "%s: %s", line, res.stderr)
	}
	after, err := os.ReadFile(patch)
	require.NoError(t, err)
	require.NotEqual(t, string(before), string(after), "the printed sed changes %s", devenv.PatchFile)
	res = devShell(t, l, l.pushLine(t, " diff --repo "))
	assert.Equal(t, 1, res.code, "diff exits 1 when there are changes: %s", res.stderr)
	assert.Contains(t, res.stdout, "blue/green transition with savepoint (job.parallelism)")
	res = devShell(t, l, l.pushLine(t, " push"))
	require.Equal(t, 0, res.code, res.stderr)
	head := devGit(t, l.clone, "rev-parse", "HEAD")
	headRev := "main@sha1:" + head
	res = devShell(t, l, l.pushLine(t, " wait fbgd "))
	assert.Equal(t, 0, res.code, "%s%s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, v1alpha1.ShortSHA(head)+" is live on "+devenv.JobName+"-green")
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
	res = devShell(t, l, l.history)
	assert.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, v1alpha1.ShortSHA(head))

	// The timeline goes on for the push of one's own, up to its rollout status.
	dev.until(t, time.Minute, "the timeline of the push", func() bool {
		return strings.Contains(dev.output(), "git push: "+v1alpha1.ShortSHA(head)+` "staging: parallelism 2"`) &&
			strings.Contains(dev.output(), "commit "+v1alpha1.ShortSHA(head)+" ← "+status.RolloutContext(devenv.JobNamespace, devenv.JobName)+": SUCCESS")
	})

	// Ctrl-C stops everything it started, removes its directory and says so.
	require.NoError(t, dev.stop(syscall.SIGINT, 90*time.Second), "bg-gitops dev stops within 90s of Ctrl-C")
	assert.Equal(t, 0, dev.exitCode, "exit code after Ctrl-C")
	assert.Regexp(t, `stopped gitea \(PID \d+\)`, dev.output())
	assert.Regexp(t, `stopped kube-apiserver \(PID \d+\), etcd \(PID \d+\)`, dev.output())
	assert.Contains(t, dev.output(), "removed "+l.dir)
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

// TestReadmeShowsTheFaultsTheDevBannerPrints: README.md shows how to try
// a failure in `bg-gitops dev` with the simulator's fault keys, as the
// banner prints them.
func TestReadmeShowsTheFaultsTheDevBannerPrints(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	want := devenv.TryAFailure("", "fraud-detection/"+devenv.PatchFile)
	assert.True(t, strings.Contains(string(readme), want), "README.md shows, in a code block:\n%s", want)
}
