/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// TestMetricsScrapedAfterRollout drives a first rollout and a blue/green
// one from Git (the second requested by a push webhook, with commit
// statuses posted to a GitHub API), scrapes /metrics and finds the series
// of both kinds with their labels; deleting the objects deletes them.
func TestMetricsScrapedAfterRollout(t *testing.T) {
	ns := newNamespace(t)
	receiver := freeAddress(t)
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: ns, Controllers: &reconcile.Options{
		CacheDir: t.TempDir(), Concurrent: 2, AllowInsecureHTTP: true, ReceiverAddress: receiver}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)
	scrape := metricsEndpoint(t)
	forge := githubStatuses(t)
	webhooksBefore := scrape().value("bggitops_webhook_requests_total", map[string]string{"result": "Requested"})

	for name, token := range map[string]string{"forge-token": "ghp_metricsTestToken", "webhook-token": "hook-s3cret"} {
		require.NoError(t, env.Client.Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: map[string]string{"token": token}}))
	}
	f := newGitFixture(t, ns)
	rev1 := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"), "job.yaml": fbgdManifest("flink:1.20.0", "")})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) {
		gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "github", Address: forge.URL, Repository: "org/flink",
			SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}}
		gr.Spec.Webhook = &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "webhook-token"}}
	})
	f.waitApplied(rev1)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	rev2 := f.push(map[string]string{"job.yaml": fbgdManifest("flink:1.20.1", "")})
	pushWebhook(t, "http://"+receiver+f.get().Status.WebhookPath, "hook-s3cret")
	f.waitApplied(rev2)
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))

	gr := map[string]string{"kind": v1alpha1.GitRepositoryKind, "namespace": ns, "name": "flink"}
	fbgd := map[string]string{"kind": v1alpha1.FlinkBlueGreenDeploymentKind, "namespace": ns, "name": "job"}
	job := map[string]string{"namespace": ns, "name": "job"}
	ready := map[string]string{"ready": "True", "reason": "Succeeded", "stalled": "false", "suspended": "false"}
	waitSeries(t, scrape, []want{
		{"bggitops_reconcile_duration_seconds_count", gr, atLeast(1)},
		{"bggitops_reconcile_duration_seconds_count", fbgd, atLeast(1)},
		{"bggitops_resource_info", with(gr, ready), equal(1)},
		{"bggitops_resource_info", with(fbgd, ready), equal(1)},
		{"bggitops_last_applied_timestamp_seconds", gr, atLeast(float64(time.Now().Add(-time.Hour).Unix()))},
		{"bggitops_last_applied_timestamp_seconds", fbgd, atLeast(float64(time.Now().Add(-time.Hour).Unix()))},
		{"bggitops_flinkbluegreendeployment_state", with(job, map[string]string{"state": "ACTIVE_GREEN"}), equal(1)},
		{"bggitops_flinkbluegreendeployment_state", with(job, map[string]string{"state": "ACTIVE_BLUE"}), equal(0)},
		{"bggitops_flinkbluegreendeployment_transition_duration_seconds_count",
			with(job, map[string]string{"rollout_kind": "First", "outcome": "Succeeded"}), equal(1)},
		{"bggitops_flinkbluegreendeployment_transition_duration_seconds_bucket",
			with(job, map[string]string{"rollout_kind": "BlueGreen", "outcome": "Succeeded", "le": "14400"}), equal(1)},
		{"bggitops_flinkbluegreendeployment_savepoint_duration_seconds_count", job, equal(1)},
		{"bggitops_flinkbluegreendeployment_rollout_start_timestamp_seconds", job, equal(0)},
		{"bggitops_flinkbluegreendeployment_aborts_total", job, equal(0)},
		{"bggitops_commit_status_requests_total",
			map[string]string{"namespace": ns, "name": "flink", "provider": "github", "result": "Succeeded"}, atLeast(1)},
		{"bggitops_webhook_requests_total", map[string]string{"result": "Requested"}, atLeast(webhooksBefore + 1)},
	})

	// Deleted objects leave no series behind.
	p := getFBGD(t, ns, "job")
	require.NoError(t, env.Client.Delete(context.Background(), p))
	waitSeries(t, scrape, []want{{"", job, absent}})
	require.NoError(t, env.Client.Delete(context.Background(), f.get()))
	waitSeries(t, scrape, []want{{"", map[string]string{"namespace": ns}, absent}})
}

// metricsEndpoint serves controller-runtime's registry, which `bg-gitops
// controller` serves on /metrics, and returns a scrape of it.
func metricsEndpoint(t *testing.T) func() exposition {
	srv := httptest.NewServer(promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return func() exposition {
		resp, err := http.Get(srv.URL + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return parseExposition(t, resp.Body)
	}
}

// githubStatuses answers GitHub's "get the combined status" (no statuses
// yet) and "create a commit status" for org/flink, as documented.
func githubStatuses(t *testing.T) *httptest.Server {
	statuses := regexp.MustCompile(`^/api/v3/repos/org/flink/(statuses/[0-9a-f]{40}|commits/[0-9a-f]{40}/status)$`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		m := statuses.FindStringSubmatch(r.URL.Path)
		switch {
		case r.Header.Get("Authorization") != "Bearer ghp_metricsTestToken":
			w.WriteHeader(http.StatusUnauthorized)
		case m != nil && r.Method == http.MethodGet && strings.HasPrefix(m[1], "commits/"):
			_, _ = io.WriteString(w, `{"state":"pending","total_count":0,"statuses":[]}`)
		case m != nil && r.Method == http.MethodPost && strings.HasPrefix(m[1], "statuses/"):
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":1}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// pushWebhook sends a GitLab push event for main until the receiver,
// which listens once the manager's caches synced, answers it.
func pushWebhook(t *testing.T, url, token string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"ref":"refs/heads/main"}`))
		require.NoError(t, err)
		req.Header.Set("X-Gitlab-Event", "Push Hook")
		req.Header.Set("X-Gitlab-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			return
		}
		require.True(t, time.Now().Before(deadline), "receiver never answered: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
}

func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// want is a series, selected by name ("" for any) and labels, and what
// its value must be.
type want struct {
	name   string
	labels map[string]string
	check  func(values []float64) bool
}

func equal(v float64) func([]float64) bool {
	return func(vs []float64) bool { return len(vs) == 1 && vs[0] == v }
}

func atLeast(v float64) func([]float64) bool {
	return func(vs []float64) bool { return len(vs) == 1 && vs[0] >= v }
}

func absent(vs []float64) bool { return len(vs) == 0 }

func with(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// waitSeries scrapes until every want holds: the controller records an
// object after writing its status, so a test that has read that status
// may scrape a moment before.
func waitSeries(t *testing.T, scrape func() exposition, wants []want) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		e, failed := scrape(), []string{}
		for _, w := range wants {
			if got := e.matching(w.name, w.labels); !w.check(got.values()) {
				failed = append(failed, fmt.Sprintf("%s%v: %v", w.name, w.labels, got))
			}
		}
		if len(failed) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("series not as expected:\n%s", strings.Join(failed, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exposition is a scrape in Prometheus's text format.
type exposition []sample

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

func parseExposition(t *testing.T, r io.Reader) exposition {
	t.Helper()
	var e exposition
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		require.NotNil(t, m, "not a sample: %q", line)
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err, line)
		s := sample{name: m[1], labels: map[string]string{}, value: v}
		for _, l := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[l[1]] = l[2]
		}
		e = append(e, s)
	}
	require.NoError(t, sc.Err())
	return e
}

// matching are the samples named name (any when "") whose labels include
// labels.
func (e exposition) matching(name string, labels map[string]string) exposition {
	var out exposition
	for _, s := range e {
		match := name == "" || s.name == name
		for k, v := range labels {
			match = match && s.labels[k] == v
		}
		if match {
			out = append(out, s)
		}
	}
	return out
}

func (e exposition) values() []float64 {
	out := make([]float64, 0, len(e))
	for _, s := range e {
		out = append(out, s.value)
	}
	return out
}

func (e exposition) value(name string, labels map[string]string) float64 {
	if vs := e.matching(name, labels).values(); len(vs) > 0 {
		return vs[0]
	}
	return 0
}

func (s sample) String() string { return fmt.Sprintf("%s%v %g", s.name, s.labels, s.value) }
