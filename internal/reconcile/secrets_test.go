/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// fakeGitea is a minimal Gitea status API on httptest (Gitea keeps
// descriptions of up to 1000 characters, so a scrubbed value far into a
// message still reaches it): it lists nothing and keeps every description
// posted to it.
type fakeGitea struct {
	*httptest.Server
	mu    sync.Mutex
	posts []string // "state: description"
}

func newFakeGitea(t *testing.T) *fakeGitea {
	f := &fakeGitea{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, `[]`)
			return
		}
		var body struct{ State, Description string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.posts = append(f.posts, body.State+": "+body.Description)
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGitea) posted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.posts...)
}

// TestSecretValuesNeverShown: a kustomize replacement copies Secret values
// (one from stringData, one from data, which the API server sees in base64)
// into labels, where the API server rejects them and quotes them in its
// error. The values appear in no condition, no event and no commit status:
// each shows *** where the value was.
func TestSecretValuesNeverShown(t *testing.T) {
	const (
		plain  = "hunter2 Sup3r-Secret!"
		binary = "binary pass\x01word"
	)
	encoded := base64.StdEncoding.EncodeToString([]byte(binary)) // ends in "=": not a label value
	ns := newNamespace(t)
	startController(t, ns)
	forge := newFakeGitea(t)
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: ns}, StringData: map[string]string{"token": "ghp_forgeTokenValue"}}))
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{
		"kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [secret.yaml, app.yaml]
replacements:
- source: {kind: Secret, name: db, fieldPath: stringData.password}
  targets:
  - select: {kind: ConfigMap, name: app}
    fieldPaths: [metadata.labels.password]
    options: {create: true}
- source: {kind: Secret, name: db, fieldPath: data.key}
  targets:
  - select: {kind: ConfigMap, name: app}
    fieldPaths: [metadata.labels.key]
    options: {create: true}
`,
		"secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: %q}\ndata: {key: %q}\n", plain, encoded),
		"app.yaml":    fmt.Sprintf(configMap, "app", "1"),
	})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL, Repository: "org/flink",
			SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})

	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "metadata.labels")
	t.Logf("ApplyFailed: %s", c.Message)
	var failure string
	eventually(t, ns, "the sync failure posted", func() bool {
		for _, p := range forge.posted() {
			if strings.HasPrefix(p, "failure: ") {
				failure = p
				return true
			}
		}
		return false
	})
	var events []string
	eventually(t, ns, "the ApplyFailed event", func() bool {
		events = eventNotes(t, ns, "GitRepository", "flink", "ApplyFailed")
		return len(events) > 0
	})

	gr := f.get()
	assert.Equal(t, rev, gr.Status.LastAttemptedRevision)
	shown := map[string]string{"commit status": failure}
	for _, c := range gr.Status.Conditions {
		shown["condition "+c.Type] = c.Message
	}
	for i, e := range events {
		shown[fmt.Sprintf("event %d", i)] = e
	}
	for what, msg := range shown {
		for _, secret := range []string{plain, encoded, "hunter2", strings.TrimRight(encoded, "=")} {
			assert.NotContains(t, msg, secret, what)
		}
	}
	assert.Contains(t, c.Message, `Invalid value: "***"`, "the API server's quote of the value is scrubbed, not dropped")
	assert.Contains(t, failure, "***")
}

// requestLog records the requests a client sends.
type requestLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []string // "GET /api/v1/namespaces/x/secrets/y?watch=true"
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	l.mu.Unlock()
	return l.next.RoundTrip(r)
}

func (l *requestLog) matching(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.reqs {
		if strings.Contains(r, substr) {
			out = append(out, r)
		}
	}
	return out
}

// TestSecretsAreNotCached: the controller reads the Secrets it needs (git
// credentials, webhook token, forge token) one by one and never lists or
// watches Secrets: a cached read would make the manager hold every Secret
// it may see in memory (with the role as shipped, every Secret in the
// cluster).
func TestSecretsAreNotCached(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	startControllerWith(t, ns, cfg)
	forge := newFakeGitea(t)
	ctx := context.Background()
	for name, token := range map[string]string{"forge-token": "ghp_forgeTokenValue", "hook": "webhook-token"} {
		require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: map[string]string{"token": token}}))
	}
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "a.yaml"), "a.yaml": fmt.Sprintf(configMap, "a", "1")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL, Repository: "org/flink",
			SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
		gr.Spec.Webhook = &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "hook"}}
	})
	f.waitApplied(rev)
	eventually(t, ns, "the sync status posted", func() bool { return len(forge.posted()) > 0 })

	for _, name := range []string{"git-auth", "hook", "forge-token"} {
		assert.NotEmpty(t, log.matching("GET /api/v1/namespaces/"+ns+"/secrets/"+name+"?"), "Secret %s read", name)
	}
	assert.Empty(t, log.matching("/secrets?"), "Secrets listed or watched")
}

// TestSecretGeneratorLiteralNeverShown: a secretGenerator literal written
// with ":" instead of "=" fails the build, and kustomize quotes the whole
// literal ("invalid literal source password:…"). The value appears in no
// condition, event or commit status.
func TestSecretGeneratorLiteralNeverShown(t *testing.T) {
	const literal = "password:Gen3rated-S3cret"
	ns := newNamespace(t)
	startController(t, ns)
	forge := newFakeGitea(t)
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: ns}, StringData: map[string]string{"token": "ghp_forgeTokenValue"}}))
	f := newGitFixture(t, ns)
	f.push(map[string]string{
		"kustomization.yaml": "resources: [app.yaml]\nsecretGenerator:\n- name: db\n  literals: [\"" + literal + "\"]\n",
		"app.yaml":           fmt.Sprintf(configMap, "app", "1"),
	})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL, Repository: "org/flink",
			SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
	})
	c := f.waitCondition(v1alpha1.BuildFailedCondition, "invalid literal source")
	t.Logf("BuildFailed: %s", c.Message)
	var failure string
	eventually(t, ns, "the sync failure posted", func() bool {
		for _, p := range forge.posted() {
			if strings.HasPrefix(p, "failure: ") {
				failure = p
				return true
			}
		}
		return false
	})
	var events []string
	eventually(t, ns, "the BuildFailed event", func() bool {
		events = eventNotes(t, ns, "GitRepository", "flink", "BuildFailed")
		return len(events) > 0
	})
	shown := append([]string{failure}, events...)
	for _, c := range f.get().Status.Conditions {
		shown = append(shown, c.Message)
	}
	for _, msg := range shown {
		assert.NotContains(t, msg, "Gen3rated-S3cret")
	}
	assert.Contains(t, c.Message, "invalid literal source ***")
}

// TestPlainSecretValueInAFailedBuildNeverShown: a build that fails on a
// plain Secret of the repository makes kustomize print the node it could
// not use ("node contents: [value]"); the value appears in no condition
// or event.
func TestPlainSecretValueInAFailedBuildNeverShown(t *testing.T) {
	plainSecretNeverShown(t, "secret.yaml")
}

// TestPlainSecretValueInAFileOfAnyNameNeverShown: the same when the
// kustomization names the Secret's file by another name than .yaml.
func TestPlainSecretValueInAFileOfAnyNameNeverShown(t *testing.T) {
	plainSecretNeverShown(t, "secret.txt")
}

func plainSecretNeverShown(t *testing.T, file string) {
	ns := newNamespace(t)
	startController(t, ns)
	f := newGitFixture(t, ns)
	f.push(map[string]string{
		"kustomization.yaml": "resources: [" + file + "]\nlabels:\n- pairs: {team: a}\n  fields:\n  - {path: stringData, kind: Secret, create: true}\n",
		file:                 "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: [Pl41n-S3cret-Value]\n",
	})
	f.create("s3cr3t-pass")
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range f.get().Status.Conditions {
				t.Logf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
			}
		}
	})
	c := f.waitCondition(v1alpha1.BuildFailedCondition, "node contents")
	t.Logf("BuildFailed: %s", c.Message)
	var events []string
	eventually(t, ns, "the BuildFailed event", func() bool {
		events = eventNotes(t, ns, "GitRepository", "flink", "BuildFailed")
		return len(events) > 0
	})
	for _, msg := range events {
		assert.NotContains(t, msg, "Pl41n-S3cret-Value")
	}
	for _, c := range f.get().Status.Conditions {
		assert.NotContains(t, c.Message, "Pl41n-S3cret-Value")
	}
	assert.Contains(t, c.Message, "node contents:\n[***]")
}
