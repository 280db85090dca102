/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops create secret git|forge|webhook`: the Secrets work with the
// controller's own readers, and --export.

package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// runCLIInput is runCLI with standard input.
func runCLIInput(t *testing.T, in string, args ...string) result {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(in))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	code := 0
	if err := root.Execute(); err != nil {
		code = 2
		errOut.WriteString("error: " + err.Error())
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func readSecret(t *testing.T, env *testenv.Env, ns, name string) *corev1.Secret {
	t.Helper()
	sec := &corev1.Secret{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, sec))
	return sec
}

// fetchWith fetches url with the credentials of the Secret, the way the
// controller does.
func fetchWith(t *testing.T, sec *corev1.Secret, url string) string {
	t.Helper()
	auth, err := source.AuthFromSecret(sec.Data, url)
	require.NoError(t, err)
	res, err := source.Fetch(context.Background(), source.Options{URL: url, Auth: auth, Timeout: 20 * time.Second,
		Dir: t.TempDir(), Ref: v1alpha1.GitRepositoryRef{Branch: "main"}, AllowInsecureHTTP: true})
	require.NoError(t, err)
	return res.Commit
}

// TestCreateSecretGit: each kind of git credentials the command creates is
// read by the controller's own code and fetches from a real git server
// that requires it.
func TestCreateSecretGit(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "jobs")
	sha := repo.Commit(map[string]string{"f": "1"}, "one")
	repo.Push("main")
	create := func(in string, args ...string) result {
		return runCLIInput(t, in, append([]string{"create", "secret", "git", "--kubeconfig", env.Kubeconfig, "-n", ns}, args...)...)
	}

	t.Run("username and password", func(t *testing.T) {
		srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{Username: "bot", Password: "s3cret-pass"})
		res := create("s3cret-pass\n", "basic", "--username", "bot", "--password", "-")
		require.Equal(t, 0, res.code, res.stderr)
		assert.Equal(t, "secret/basic created in namespace "+ns+" (keys: password, username)\n", res.stdout)
		assert.NotContains(t, res.stdout+res.stderr, "s3cret-pass")
		assert.Equal(t, sha, fetchWith(t, readSecret(t, env, ns, "basic"), srv.URL+"/jobs.git"))
	})
	t.Run("bearer token", func(t *testing.T) {
		srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{Token: "tok-123456"})
		res := create("", "bearer", "--bearer-token", "tok-123456")
		require.Equal(t, 0, res.code, res.stderr)
		assert.Equal(t, sha, fetchWith(t, readSecret(t, env, ns, "bearer"), srv.URL+"/jobs.git"))
	})
	t.Run("ssh key and known hosts", func(t *testing.T) {
		key, pub := gittest.NewKey(t)
		srv := gittest.ServeSSH(t, root, pub)
		dir := t.TempDir()
		keyFile, knownHosts := filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "known_hosts")
		require.NoError(t, os.WriteFile(keyFile, key, 0o600))
		require.NoError(t, os.WriteFile(knownHosts, srv.KnownHosts(), 0o600))
		res := create("", "ssh", "--ssh-key-file", keyFile, "--known-hosts-file", knownHosts)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Equal(t, sha, fetchWith(t, readSecret(t, env, ns, "ssh"), srv.URL("jobs.git")))

		res = create("", "ssh-no-hosts", "--ssh-key-file", keyFile)
		assert.Equal(t, 2, res.code)
		assert.Contains(t, res.stderr, "--ssh-key-file needs --known-hosts-file")
	})
	t.Run("refused as the controller would refuse it", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "key")
		require.NoError(t, os.WriteFile(bad, []byte("not a key"), 0o600))
		for args, want := range map[string]string{
			"x --ssh-key-file " + bad + " --known-hosts-file " + bad: "the controller would refuse this Secret: the identity in the Secret is not a valid private key",
			"x --username bot":                   "give both --username and --password",
			"x":                                  "give --username and --password, --bearer-token, or --ssh-key-file",
			"x --bearer-token t --username u":    "if any flags in the group [bearer-token username] are set none of the others can be",
			"basic --username bot --password pw": "secret " + ns + "/basic already exists",
		} {
			res := create("", strings.Fields(args)...)
			assert.Equal(t, 2, res.code, args)
			assert.Contains(t, res.stderr, want, args)
		}
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "x"}, &corev1.Secret{})
		assert.True(t, apierrors.IsNotFound(err), "nothing created: %v", err)
	})
}

// TestCreateSecretExport: --export prints the Secret and creates nothing.
func TestCreateSecretExport(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	res := runCLIInput(t, "", "create", "secret", "forge", "forge-token", "--token", "glpat-abcdef", "--export", "-n", ns, "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, `apiVersion: v1
data:
  token: Z2xwYXQtYWJjZGVm
kind: Secret
metadata:
  name: forge-token
  namespace: `+ns+`
type: Opaque
`, res.stdout)
	sec := &corev1.Secret{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(res.stdout), sec))
	assert.Equal(t, "glpat-abcdef", string(sec.Data["token"]))
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "forge-token"}, &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err), "--export creates nothing: %v", err)
}

// fakeGitHub answers the two GitHub Enterprise requests of a commit status
// post (the combined status, then the new status) and records the
// Authorization headers (GitHub cannot run here).
func fakeGitHub(t *testing.T, sha string) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.Method + " " + r.URL.Path {
		case "GET /api/v3/repos/org/jobs/commits/" + sha + "/status":
			_, _ = w.Write([]byte(`{"state":"pending","statuses":[]}`))
		case "POST /api/v3/repos/org/jobs/statuses/" + sha:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// TestCreateSecretForge: the controller's commit status reporter posts
// with the token of the Secret the command created.
func TestCreateSecretForge(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	res := runCLIInput(t, "ghp_forgeToken123\n", "create", "secret", "forge", "forge-token", "--token", "-", "-n", ns, "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, res.code, res.stderr)

	sha := strings.Repeat("a", 40)
	srv, seen := fakeGitHub(t, sha)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jobs", Generation: 1},
		Spec: v1alpha1.GitRepositorySpec{CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "github", Address: srv.URL,
			Repository: "org/jobs", SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}}}
	gr.Status.LastAttemptedRevision = "main@sha1:" + sha
	gr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Progressing"}}
	r := &reconcile.CommitStatusReporter{Client: env.Client, HTTP: srv.Client(), AllowInsecureHTTP: true}
	require.NoError(t, r.ReportSync(context.Background(), gr, nil))
	assert.Nil(t, meta.FindStatusCondition(gr.Status.Conditions, v1alpha1.CommitStatusFailedCondition), "posted: %+v", gr.Status.Conditions)
	assert.Contains(t, seen(), "POST /api/v3/repos/org/jobs/statuses/"+sha+" Bearer ghp_forgeToken123")
}

// TestCreateSecretWebhook: a random token, from which the controller
// derives the GitRepository's receiver path.
func TestCreateSecretWebhook(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	res := runCLI(t, "create", "secret", "webhook", "hook", "-n", ns, "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "secret/hook created in namespace "+ns+" (keys: token)\n")
	assert.Contains(t, res.stdout, "kubectl -n "+ns+" get secret hook -o jsonpath='{.data.token}' | base64 -d")
	token := readSecret(t, env, ns, "hook").Data["token"]
	assert.Regexp(t, "^[0-9a-f]{64}$", string(token))
	assert.NotContains(t, res.stdout, string(token), "the token is not printed")

	other := runCLI(t, "create", "secret", "webhook", "hook", "--export", "-n", ns)
	require.Equal(t, 0, other.code, other.stderr)
	assert.NotContains(t, other.stdout, string(token), "every token is new")

	gr := newTestGitRepository(ns, "jobs", "https://127.0.0.1:1/jobs.git", "./app", nil)
	gr.Spec.Webhook = &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "hook"}}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	want := source.WebhookPath(token, ns, "jobs")
	eventually(t, "status.webhookPath from the token", func() bool {
		return getTestGitRepository(t, env, ns, "jobs").Status.WebhookPath == want
	})
}

// --export of a generated webhook token says the token (the sealed YAML
// will not) and, without -n, which namespace it wrote; on stderr, so the
// YAML on stdout stays what kubeseal reads.
func TestExportSaysTheTokenAndTheNamespace(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: team-a}}]
current-context: c
`), 0o600))
	res := runCLI(t, "create", "secret", "webhook", "hook", "--export", "--kubeconfig", kubeconfig)
	require.Equal(t, 0, res.code, res.stderr)
	sec := &corev1.Secret{}
	require.NoError(t, yaml.Unmarshal([]byte(res.stdout), sec))
	assert.Equal(t, "team-a", sec.Namespace)
	assert.Contains(t, res.stderr, "namespace team-a (the kubeconfig's)")
	assert.Contains(t, res.stderr, "generated token (give it to the forge): "+string(sec.Data["token"]))
}
