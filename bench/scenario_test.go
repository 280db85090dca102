//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const (
	webhookSecret = "webhook-token"
	webhookToken  = "bench-webhook-shared-secret"
	leaseName     = "bg-gitops-controller-leader"
	leaseNS       = "bench-system"
)

// world is what every scenario shares: one control plane (with an audit
// log), one git server with the bare repositories, the tracker, and the
// report.
type world struct {
	s       settings
	env     *testenv.Env
	cfg     *rest.Config
	c       client.Client
	tr      *tracker
	git     *gitServer
	gitRoot string
	audit   auditLog
	binary  string
	logDir  string
	profDir string
	rep     *report
	repos   int
	// ctx ends with the scenarios (the trackers' watches).
	ctx context.Context
	// flux is set up by the first Flux scenario (flux_test.go).
	flux *fluxWorld
	// dir lasts as long as the scenarios.
	dir string
}

func TestScenarios(t *testing.T) {
	s := loadSettings()
	if s.out == "" {
		t.Skip("scenario benchmarks run from `make bench` (set BGGITOPS_BENCH_OUT)")
	}
	w := setup(t, s)
	defer func() {
		if err := w.rep.write(); err != nil {
			t.Error(err)
		}
	}()
	w.describeWorkload()
	if s.phases["scale"] {
		for _, n := range s.scales {
			w.phase(t, fmt.Sprintf("scale-%d", n), func(t *testing.T) { w.scalePhase(t, n, true) })
		}
	}
	if s.fluxNotRun == "" && s.phases["flux"] {
		w.phase(t, "flux", w.fluxPhase)
	}
	if s.phases["leader-off"] {
		w.phase(t, "leader-election-off", func(t *testing.T) { w.scalePhase(t, 50, false) })
	}
	if s.phases["qps"] {
		w.phase(t, "qps-raised", w.qpsPhase)
	}
	if s.phases["shards"] {
		w.phase(t, "shards", w.shardPhase)
	}
	if s.phases["takeover"] {
		w.phase(t, "takeover", w.takeoverPhase)
	}
	if s.phases["rollout"] {
		w.phase(t, "rollout", w.rolloutPhase)
	}
	if s.phases["monorepo"] {
		w.phase(t, "monorepo", w.monorepoPhase)
	}
	w.goBenchmarks()
}

// phase runs one scenario as a subtest; a failure is recorded in the
// report and the next scenario still runs.
func (w *world) phase(t *testing.T, name string, f func(t *testing.T)) {
	start := time.Now()
	ok := t.Run(name, f)
	t.Logf("phase %s: %s", name, time.Since(start).Round(time.Second))
	if !ok {
		w.rep.fail("scenario %s failed; its figures are missing or partial (see the go test log)", name)
	}
}

func setup(t *testing.T, s settings) *world {
	ctrllog.SetLogger(logr.Discard())
	gittest.Isolate(t)
	root := moduleRoot()
	binary := os.Getenv("BGGITOPS_BENCH_BINARY") // another build to measure (hack/bench.sh BENCH_BINARY)
	if binary == "" {
		binary = filepath.Join(root, "bin", "bg-gitops-image")
	}
	w := &world{s: s, rep: newReport(s.out, s.fluxNotRun), binary: binary,
		profDir: filepath.Join(s.out, "profiles"), gitRoot: t.TempDir(), logDir: os.Getenv("BENCH_LOG_DIR")}
	if w.logDir == "" {
		w.logDir = t.TempDir()
	}
	for _, d := range []string{w.profDir, w.logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(w.binary); err != nil && !(len(s.phases) == 1 && s.phases["flux"]) {
		t.Fatalf("%s: run make build first", w.binary)
	}
	dir := t.TempDir()
	w.dir = dir
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	w.audit = auditLog{path: filepath.Join(dir, "audit.log")}
	env, err := testenv.Start(testenv.Options{APIServerArgs: map[string]string{
		"audit-log-path": w.audit.path, "audit-policy-file": policy, "audit-log-format": "json",
		// The API server rotates its audit log at 100 MB by default, which
		// a run with Flux at N=500 passes; offsets into the log must stay
		// valid for the whole run.
		"audit-log-maxsize": "100000",
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	w.env = env
	// The benchmark (and the simulator) act as a user of their own, so the
	// audit log tells their requests from the controller's; their client
	// must not be the bottleneck.
	if w.cfg, err = env.AddUser("bench-driver", "system:masters"); err != nil {
		t.Fatal(err)
	}
	w.cfg.QPS, w.cfg.Burst = 1000, 2000
	if w.c, err = client.New(w.cfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w.ctx = ctx
	if w.tr, err = startTracker(ctx, w.cfg); err != nil {
		t.Fatal(err)
	}
	if s.gitea {
		w.git = serveGitea(t, w.gitRoot, startForge(t))
	} else {
		w.git = serveGit(t, w.gitRoot)
	}
	for _, ns := range []string{leaseNS, "bench-shard-a", "bench-shard-b", "bench-takeover"} {
		w.namespace(t, ns)
	}
	return w
}

func (w *world) describeWorkload() {
	wl := w.rep.Workload
	wl["repositories"] = "one bare repository per GitRepository, served by `git http-backend` (CGI behind net/http) over smart HTTP on 127.0.0.1, no auth"
	if w.git.forge != nil {
		wl["repositories"] = "one public repository per GitRepository, served by a real Gitea's own smart HTTP (BENCH_GIT=gitea: `gitea web`, sqlite, which runs git upload-pack per request) through a request-counting proxy on 127.0.0.1, no auth; every commit is made in a local bare repository and pushed to Gitea before the clock starts"
	}
	wl["./deploy"] = "kustomization with 3 ConfigMaps; the rollout scenario adds one FlinkBlueGreenDeployment and is served by Gitea"
	wl["GitRepository"] = "interval 1m, ref main, path ./deploy, targetNamespace = its own namespace, webhook secretRef set (receiver on)"
	wl["controller"] = "`bin/bg-gitops-image controller` (built as the image builds it: -tags nodev, -trimpath, -s -w) as a separate process, default flags (--concurrent 4; no client-side rate limiter: the API server has API Priority and Fairness), leader election on unless stated"
	wl["control plane"] = "internal/testing/testenv: etcd + kube-apiserver with an audit log (Metadata level) on the same 2 cores"
	wl["rounds"] = fmt.Sprintf("%d rounds per latency figure; creation rounds: %d at N<500, %d at N=500, %d for the N=500 what-if with the client-side limiter of a server without APF and %d for the two shards (each round creates N GitRepositories in a fresh namespace, then deletes them)",
		w.s.rounds, w.s.rounds, w.s.bigRounds, w.s.qpsBigRounds, w.s.shardRounds)
}

func (w *world) namespace(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := w.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	err := w.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: webhookSecret, Namespace: ns},
		StringData: map[string]string{"token": webhookToken}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// ensureRepos creates bare repositories repo000 … up to n.
func (w *world) ensureRepos(t *testing.T, n int) {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				w.git.commit(t, repoName(i), workloadFiles(i, "v0"), "initial")
			}
		}()
	}
	for i := w.repos; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if n > w.repos {
		t.Logf("created repositories %d..%d in %s", w.repos, n-1, time.Since(start).Round(time.Millisecond))
		w.repos = n
	}
}

// spreadRounds measures the creation of n GitRepositories each in a
// namespace of its own: the render and fetch workers run one per
// namespace, so this is the shape in which all of them run at once.
func (w *world) spreadRounds(t *testing.T, n int, name, label, section string) {
	var create []float64
	for r := 1; r <= w.s.rounds; r++ {
		prefix := fmt.Sprintf("%s-spread-r%d-", name, r)
		d := w.createSpread(t, prefix, n)
		t.Logf("%s spread round %d: %d Ready in %s", name, r, n, d.Round(time.Millisecond))
		create = append(create, d.Seconds())
		for i := range n {
			w.deleteAll(t, fmt.Sprintf("%s%03d", prefix, i))
		}
	}
	w.rep.add(figure{ID: "create-spread-" + name, Section: section, Name: fmt.Sprintf("creation → all Ready, %s, one namespace each", label),
		Unit: "s", Samples: create, Note: "n tenants of one GitRepository each, where the figure above is one tenant with n"})
}

func gitRepository(ns string, i int, url string, labels map[string]string) *v1alpha1.GitRepository {
	return &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: repoName(i), Namespace: ns, Labels: labels},
		Spec: v1alpha1.GitRepositorySpec{
			URL: url, Path: "./deploy", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Minute},
			Webhook:  &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: webhookSecret}},
		},
	}
}

// createAll creates n GitRepositories in ns (8 at a time) and returns when
// all are Ready: the time from the first create to the last Ready.
func (w *world) createAll(t *testing.T, ns string, n int, label func(i int) map[string]string) time.Duration {
	t.Helper()
	w.namespace(t, ns)
	return w.create(t, n, func(int) string { return ns }, label, func(tr *tracker) bool { return tr.countReady(ns) == n })
}

// createSpread creates n GitRepositories, each in a namespace of its own
// (prefix followed by its number), and returns when all are Ready: n
// tenants, where createAll is one tenant with n.
func (w *world) createSpread(t *testing.T, prefix string, n int) time.Duration {
	t.Helper()
	nsOf := func(i int) string { return fmt.Sprintf("%s%03d", prefix, i) }
	for i := range n {
		w.namespace(t, nsOf(i))
	}
	return w.create(t, n, nsOf, nil, func(tr *tracker) bool {
		count := 0
		for _, gr := range tr.grs {
			if strings.HasPrefix(gr.Namespace, prefix) && ready(gr) {
				count++
			}
		}
		return count == n
	})
}

// create creates n GitRepositories, the i-th in nsOf(i), 8 at a time, and
// returns when done says so: the time from the first create to then.
func (w *world) create(t *testing.T, n int, nsOf func(int) string, label func(i int) map[string]string, done func(*tracker) bool) time.Duration {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, n)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var l map[string]string
				if label != nil {
					l = label(i)
				}
				if err := w.c.Create(ctx, gitRepository(nsOf(i), i, w.git.URL+"/"+repoName(i)+".git", l)); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	end, err := w.tr.waitFor(ctx, 10*time.Minute, fmt.Sprintf("%d GitRepositories Ready in %s…", n, nsOf(0)), done)
	if err != nil {
		t.Fatal(err)
	}
	return end.Sub(start)
}

// deleteAll deletes the GitRepositories of ns and waits until they are gone.
func (w *world) deleteAll(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := w.c.DeleteAllOf(ctx, &v1alpha1.GitRepository{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tr.waitFor(ctx, 2*time.Minute, "GitRepositories deleted in "+ns, func(tr *tracker) bool {
		for _, gr := range tr.grs {
			if gr.Namespace == ns {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) waitLeader(t *testing.T, ns string, not ...string) string {
	t.Helper()
	var holder string
	_, err := w.tr.waitFor(context.Background(), time.Minute, "a leader in "+ns, func(tr *tracker) bool {
		l := tr.leases[ns+"/"+leaseName]
		if l == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return false
		}
		holder = *l.Spec.HolderIdentity
		return !contains(not, holder)
	})
	if err != nil {
		t.Fatal(err)
	}
	return holder
}

func (w *world) requestReconcile(t *testing.T, ns, name, value string) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, v1alpha1.ReconcileRequestedAtAnnotation, value))
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := w.c.Patch(context.Background(), gr, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

// scalePhase is §1 and §3 at one N: creation rounds, the idle minute,
// commit + annotation → applied, webhook → reconcile start, peak RSS.
func (w *world) scalePhase(t *testing.T, n int, leaderElect bool) {
	ctx := context.Background()
	name := fmt.Sprintf("n%d", n)
	label := fmt.Sprintf("N=%d", n)
	if !leaderElect {
		name += "-nole"
		label += ", leader election off"
	}
	rounds := w.s.rounds
	if n >= 500 {
		rounds = w.s.bigRounds
	}
	w.ensureRepos(t, n)
	p := w.startController(t, name, controllerArgs{leaderElect: leaderElect, leaseNS: leaseNS})
	if leaderElect {
		w.waitLeader(t, leaseNS)
	}
	section := "§3 creation, memory and idle cost"
	var create []float64
	var lastNS string
	cpu := cpuTimes{}
	m0 := p.scrape()
	for r := 1; r <= rounds; r++ {
		ns := fmt.Sprintf("%s-r%d", name, r)
		var prof sync.WaitGroup
		if n >= 50 && r == 2 && leaderElect {
			secs := 4
			if n >= 500 {
				secs = 20
			}
			prof.Add(2)
			go func() {
				defer prof.Done()
				w.cpuProfile(ctx, p, fmt.Sprintf("CPU during creation of %d GitRepositories (first %d s of round 2)", n, secs), name+"-create-cpu.pb.gz", secs)
			}()
			go func() {
				defer prof.Done()
				w.rep.Extra["creation, "+label+", round 2: wall-clock samples of the workers"] = p.sampleWorkers(ctx, 100*time.Millisecond, time.Duration(secs)*time.Second*8/10)
			}()
		}
		c0 := w.snapshotCPU(p)
		off, from := w.audit.offset(), time.Now()
		g0 := w.git.busy()
		d := w.createAll(t, ns, n, nil)
		cpu.add(c0, w.snapshotCPU(p))
		if r == rounds {
			w.rep.Extra["creation, "+label+", last round: API server time for the controller's requests"] = w.audit.serverTime(off, controllerUser, from, time.Now())
			w.rep.Extra["creation, "+label+", last round: git server time"] = w.git.busySince(g0)
		}
		prof.Wait()
		t.Logf("%s round %d: %d Ready in %s", name, r, n, d.Round(time.Millisecond))
		create = append(create, d.Seconds())
		if r < rounds {
			w.deleteAll(t, ns)
		}
		lastNS = ns
	}
	f := figure{ID: "create-" + name, Section: section, Name: fmt.Sprintf("creation → all Ready, %s", label), Unit: "s", Samples: create}
	switch n {
	case 50:
		f.Target, f.TargetMax = "≤ 1.5 s", target(1.5)
	case 500:
		f.Target, f.TargetMax = "≤ 15 s", target(15)
	}
	w.rep.add(f)
	total := 0.0
	for _, c := range create {
		total += c
	}
	w.rep.Extra["creation rounds, "+label+": CPU by process"] = fmt.Sprintf("%.1f s of wall time over %d rounds (%.0f core-seconds on %d cores): %s",
		total, rounds, total*float64(runtime.NumCPU()), runtime.NumCPU(), cpu)
	w.rep.Extra["creation rounds, "+label+": controller time"] = clientTime(m0, p.scrape()) + " (all rounds, including the deletes between them)"

	if n == 50 && leaderElect {
		w.spreadRounds(t, n, name, label, section)
	}
	if n >= 50 {
		w.idleMinute(t, p, n, label, leaderElect)
	}
	if n <= 50 {
		w.latencyRounds(t, lastNS, n, label)
		w.webhookRounds(t, p, lastNS, n, label)
	}
	rss := float64(p.peakRSS()) / (1 << 20)
	rf := figure{ID: "rss-" + name, Section: section, Name: fmt.Sprintf("controller peak RSS (VmHWM), %s", label), Unit: "MiB", Samples: []float64{rss},
		Note: "one process over the whole scenario (all rounds), so one value"}
	switch n {
	case 50:
		rf.Target, rf.TargetMax = "≤ 120 MiB", target(120)
	case 500:
		rf.Target, rf.TargetMax = "≤ 100 MiB", target(100)
	}
	w.rep.add(rf)
	w.rep.add(figure{ID: "tree-rss-" + name, Section: section, Name: fmt.Sprintf("peak RSS of the controller and its workers together, %s", label), Unit: "MiB",
		Samples: []float64{float64(p.treePeakRSS()) / (1 << 20)},
		Note:    fmt.Sprintf("the sum of VmRSS over the controller and its fetch and render worker processes, sampled every %s over the whole scenario, so one value", treeSample)})
	w.rep.Extra["memory at the end, "+label] = w.memory(ctx, p)
	if n >= 50 && leaderElect {
		w.heapProfile(ctx, p, fmt.Sprintf("heap in use at N=%d", n), name+"-heap.pb.gz")
	}
	p.stop(syscall.SIGTERM)
	w.deleteAll(t, lastNS)
}

// qpsPhase repeats the creation rounds with the client-side rate limit the
// controller keeps on an API server without API Priority and Fairness
// (--kube-api-qps 50 --kube-api-burst 300): not the default here, but it
// shows what the limiter costs where it applies.
func (w *world) qpsPhase(t *testing.T) {
	for _, n := range []int{50, 500} {
		rounds := w.s.rounds
		if n >= 500 {
			rounds = w.s.qpsBigRounds
		}
		w.ensureRepos(t, n)
		name := fmt.Sprintf("n%d-qps", n)
		p := w.startController(t, name, controllerArgs{leaderElect: true, leaseNS: leaseNS, extra: []string{"--kube-api-qps", "50", "--kube-api-burst", "300"}})
		w.waitLeader(t, leaseNS)
		var create []float64
		var lastNS string
		for r := 1; r <= rounds; r++ {
			ns := fmt.Sprintf("%s-r%d", name, r)
			d := w.createAll(t, ns, n, nil)
			t.Logf("%s round %d: %d Ready in %s", name, r, n, d.Round(time.Millisecond))
			create = append(create, d.Seconds())
			if r < rounds {
				w.deleteAll(t, ns)
			}
			lastNS = ns
		}
		label := fmt.Sprintf("N=%d, client-side limiter --kube-api-qps 50 --kube-api-burst 300 (the default without APF)", n)
		w.rep.add(figure{ID: "create-" + name, Section: "§3 creation, memory and idle cost", Name: "creation → all Ready, " + label, Unit: "s", Samples: create,
			Note: "what-if run: the creation time where the API server has no API Priority and Fairness and the controller keeps its client-side limiter"})
		w.rep.add(figure{ID: "rss-" + name, Section: "§3 creation, memory and idle cost", Name: "controller peak RSS (VmHWM), " + label, Unit: "MiB",
			Samples: []float64{float64(p.peakRSS()) / (1 << 20)}, Note: "one process, one value"})
		p.stop(syscall.SIGTERM)
		w.deleteAll(t, lastNS)
	}
}

// idleMinute measures what n Ready GitRepositories cost per idle minute.
func (w *world) idleMinute(t *testing.T, p *controllerProc, n int, label string, leaderElect bool) {
	ctx := context.Background()
	time.Sleep(5 * time.Second)
	off := w.audit.offset()
	from := time.Now()
	cpu0 := p.cpuSeconds()
	m0 := p.scrape()
	rec0 := m0.sum("controller_runtime_reconcile_total", `controller="gitrepository"`)
	l0, u0 := w.git.counts()
	var prof sync.WaitGroup
	if leaderElect {
		// Sampling only while the process runs on a CPU: no measurable
		// cost next to what it measures.
		prof.Add(1)
		go func() {
			defer prof.Done()
			w.cpuProfile(ctx, p, fmt.Sprintf("CPU over the idle minute, %s", label), fmt.Sprintf("n%d-idle-cpu.pb.gz", n), int(w.s.idle.Seconds()))
		}()
	}
	time.Sleep(w.s.idle)
	to := time.Now()
	cpu1 := p.cpuSeconds()
	m1 := p.scrape()
	rec1 := m1.sum("controller_runtime_reconcile_total", `controller="gitrepository"`)
	l1, u1 := w.git.counts()
	time.Sleep(2 * time.Second) // let the audit log catch up
	prof.Wait()
	perMin := time.Minute.Seconds() / to.Sub(from).Seconds()
	counts, err := w.audit.count(off, controllerUser, from, to)
	if err != nil {
		t.Fatal(err)
	}
	pm := counts.scaled(perMin)
	w.rep.Idle[label] = pm
	section := "§3 creation, memory and idle cost"
	reconciles := (rec1 - rec0) * perMin
	fr := figure{ID: "idle-requests-n" + fmt.Sprint(n), Section: section, Name: "API requests per idle minute, " + label, Unit: "requests", Samples: []float64{float64(pm.Total)},
		Note: fmt.Sprintf("%d lease requests; %.0f no-op reconciles in the minute (%s)", pm.Leases, reconciles, byResult(m0, m1, perMin))}
	fw := figure{ID: "idle-writes-n" + fmt.Sprint(n), Section: section, Name: "write requests per idle minute, " + label, Unit: "writes", Samples: []float64{float64(pm.Writes)},
		Note: fmt.Sprintf("%d of them lease renewals", pm.LeaseWrites)}
	fnl := figure{ID: "idle-nonlease-writes-n" + fmt.Sprint(n), Section: section, Name: "writes per idle minute other than lease renewals, " + label, Unit: "writes",
		Samples: []float64{float64(pm.Writes - pm.LeaseWrites)}, Target: "0 (only lease renewals write)", TargetMax: target(0)}
	var fpr figure
	if reconciles > 0 {
		// A ratio of the counts in the window, not of the per-minute
		// figures (those are rounded to whole requests).
		nonLease := float64(counts.Total - counts.Leases)
		fpr = figure{ID: "requests-per-noop-n" + fmt.Sprint(n), Section: section, Name: "API requests per no-op reconcile (3 managed objects), " + label, Unit: "requests",
			Samples: []float64{nonLease / (rec1 - rec0)}, Target: "≤ 3 (one per managed object)", TargetMax: target(3),
			Note: fmt.Sprintf("%.0f requests other than the lease's in %.0f reconciles", nonLease, rec1-rec0)}
	} else {
		fpr = figure{ID: "requests-per-noop-n" + fmt.Sprint(n), Section: section, Name: "API requests per no-op reconcile, " + label, NotMeasured: "no reconcile ran in the idle window"}
	}
	fc := figure{ID: "idle-cpu-n" + fmt.Sprint(n), Section: section, Name: "controller CPU per idle minute, " + label, Unit: "CPU-s", Samples: []float64{(cpu1 - cpu0) * perMin},
		Note: "utime+stime from /proc/PID/stat"}
	fg := figure{ID: "idle-git-n" + fmt.Sprint(n), Section: section, Name: "git requests per idle minute, " + label, Unit: "requests", Samples: []float64{float64(l1-l0+u1-u0) * perMin},
		Note: fmt.Sprintf("%.0f ref listings, %.0f upload-packs", float64(l1-l0)*perMin, float64(u1-u0)*perMin)}
	switch {
	case n == 50 && leaderElect:
		fc.Target, fc.TargetMax = "≤ 0.4 CPU-s", target(0.4)
	case n == 500 && leaderElect:
		fc.Target, fc.TargetMax = "≤ 1.5 CPU-s", target(1.5)
	}
	for _, f := range []figure{fr, fw, fnl, fpr, fc, fg} {
		w.rep.add(f)
	}
}

// byResult splits the GitRepository reconciles between two scrapes by
// controller-runtime's result label, per minute.
func byResult(a, b metricsText, perMin float64) string {
	var parts []string
	for _, r := range []string{"success", "requeue", "requeue_after", "error"} {
		m := fmt.Sprintf("result=%q", r)
		n := b.sum("controller_runtime_reconcile_total", `controller="gitrepository"`, m) - a.sum("controller_runtime_reconcile_total", `controller="gitrepository"`, m)
		parts = append(parts, fmt.Sprintf("%s %.0f", r, n*perMin))
	}
	return strings.Join(parts, ", ")
}

// latencyRounds: new commit + reconcile-requested-at → lastAppliedRevision.
func (w *world) latencyRounds(t *testing.T, ns string, n int, label string) {
	ctx := context.Background()
	var lat []float64
	for r := 0; r < w.s.rounds; r++ {
		i := r % n
		sha := w.git.commit(t, repoName(i), workloadFiles(i, fmt.Sprintf("latency-%d-%d", r, time.Now().UnixNano())), "change")
		rev := "main@sha1:" + sha
		start := time.Now()
		w.requestReconcile(t, ns, repoName(i), start.Format(time.RFC3339Nano))
		end, err := w.tr.waitFor(ctx, 2*time.Minute, "applied "+rev, appliedRev(ns, repoName(i), rev))
		if err != nil {
			t.Fatal(err)
		}
		lat = append(lat, end.Sub(start).Seconds())
		time.Sleep(200 * time.Millisecond)
	}
	f := figure{ID: "commit-annotation-applied-n" + fmt.Sprint(n), Section: "§1 latency", Name: "commit + annotation → applied, " + label, Unit: "s", Samples: lat,
		Target: "≤ 0.05 s", TargetMax: target(0.05), Note: "from the annotation patch to the watch event showing lastAppliedRevision (ls-remote, fetch, render, dry-run, apply, status)"}
	w.rep.add(f)
}

// webhookRounds: a signed Gitea-style push event POSTed to the receiver →
// the controller lists the repository's refs (reconcile start) → applied.
func (w *world) webhookRounds(t *testing.T, p *controllerProc, ns string, n int, label string) {
	ctx := context.Background()
	var gr *v1alpha1.GitRepository
	var resp, start, applied []float64
	for r := 0; r < w.s.rounds; r++ {
		i := (r + w.s.rounds) % n
		w.tr.mu.Lock()
		gr = w.tr.gr(ns, repoName(i))
		w.tr.mu.Unlock()
		if gr == nil || gr.Status.WebhookPath == "" {
			t.Fatalf("%s/%s has no webhook path", ns, repoName(i))
		}
		sha := w.git.commit(t, repoName(i), workloadFiles(i, fmt.Sprintf("webhook-%d-%d", r, time.Now().UnixNano())), "change")
		rev := "main@sha1:" + sha
		body := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","before":"%040d","after":%q,"repository":{"full_name":"bench/%s"}}`, 0, sha, repoName(i)))
		mac := hmac.New(sha256.New, []byte(webhookToken))
		mac.Write(body)
		req, _ := http.NewRequest(http.MethodPost, "http://"+p.receiver+gr.Status.WebhookPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Gitea-Event", "push")
		req.Header.Set("X-Gitea-Signature", hex.EncodeToString(mac.Sum(nil)))
		t0 := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		t1 := time.Now()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("webhook: %s", res.Status)
		}
		end, err := w.tr.waitFor(ctx, 2*time.Minute, "applied "+rev, appliedRev(ns, repoName(i), rev))
		if err != nil {
			t.Fatal(err)
		}
		listed, ok := w.git.firstListingAfter(repoName(i), t0)
		if !ok {
			t.Fatalf("no ref listing of %s after the webhook", repoName(i))
		}
		resp = append(resp, t1.Sub(t0).Seconds())
		start = append(start, listed.Sub(t0).Seconds())
		applied = append(applied, end.Sub(t0).Seconds())
		time.Sleep(200 * time.Millisecond)
	}
	s := "§1 latency"
	w.rep.add(figure{ID: "webhook-response-n" + fmt.Sprint(n), Section: s, Name: "webhook POST → receiver answered 200 (annotation patched), " + label, Unit: "s", Samples: resp})
	w.rep.add(figure{ID: "webhook-start-n" + fmt.Sprint(n), Section: s, Name: "webhook receipt → reconcile start (first ref listing at the git server), " + label, Unit: "s", Samples: start})
	w.rep.add(figure{ID: "webhook-applied-n" + fmt.Sprint(n), Section: s, Name: "webhook receipt → applied, " + label, Unit: "s", Samples: applied})
}

func (w *world) cpuProfile(ctx context.Context, p *controllerProc, title, file string, secs int) {
	out := filepath.Join(w.profDir, file)
	if err := p.profile(ctx, "profile", secs, out); err != nil {
		w.rep.fail("profile %s: %v", title, err)
		return
	}
	w.summarize(title+", cumulative", out, "-top", "-cum", "-nodecount=45")
}

func (w *world) heapProfile(ctx context.Context, p *controllerProc, title, file string) {
	out := filepath.Join(w.profDir, file)
	if err := p.profile(ctx, "heap", 0, out); err != nil {
		w.rep.fail("profile %s: %v", title, err)
		return
	}
	w.summarize(title+" (inuse_space)", out, "-top", "-nodecount=20", "-sample_index=inuse_space")
}

// memory breaks the controller's resident memory down: anonymous (Go heap,
// stacks) vs file-backed (the mapped binary), and the Go runtime's view.
func (w *world) memory(ctx context.Context, p *controllerProc) string {
	out := fmt.Sprintf("VmHWM %d MiB, VmRSS %d MiB = RssAnon %d MiB + RssFile %d MiB (mapped binary and libraries)",
		procStatusKB(p.pid(), "VmHWM")>>10, procStatusKB(p.pid(), "VmRSS")>>10, procStatusKB(p.pid(), "RssAnon")>>10, procStatusKB(p.pid(), "RssFile")>>10)
	file := filepath.Join(w.logDir, p.name+"-heap-debug.txt")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.pprof+"/debug/pprof/heap?debug=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	_ = os.WriteFile(file, body, 0o644)
	stats := map[string]int64{}
	for _, l := range strings.Split(string(body), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(l, "# "), " = "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				stats[k] = n
			}
		}
	}
	mib := func(k string) int64 { return stats[k] >> 20 }
	return out + fmt.Sprintf("; Go runtime: Sys %d MiB, HeapSys %d MiB, HeapInuse %d MiB, HeapAlloc %d MiB, HeapReleased %d MiB, StackSys %d MiB, NextGC %d MiB",
		mib("Sys"), mib("HeapSys"), mib("HeapInuse"), mib("HeapAlloc"), mib("HeapReleased"), mib("StackSys"), mib("NextGC"))
}

func (w *world) summarize(title, file string, args ...string) {
	cmd := exec.Command("go", append(append([]string{"tool", "pprof"}, args...), w.binary, file)...)
	out, err := cmd.Output()
	if err != nil {
		w.rep.fail("pprof %s: %v", file, err)
		return
	}
	w.rep.Profiles = append(w.rep.Profiles, profileSummary{Name: title, File: filepath.Base(file), Top: string(out)})
}

func (w *world) goBenchmarks() {
	path := filepath.Join(w.s.out, "go-bench.txt")
	res, err := parseGoBench(path)
	if err != nil {
		w.rep.fail("go benchmarks: %v (hack/bench.sh writes %s before the scenarios)", err, path)
		return
	}
	w.rep.GoBench = res
	s := "§4 fetch and render"
	add := func(id, name, bench, note string) {
		for _, g := range res {
			if g.Name == bench || strings.HasPrefix(g.Name, bench+"-") {
				if ns := g.Metrics["ns/op"]; len(ns) > 0 {
					samples := make([]float64, len(ns))
					for i, v := range ns {
						samples[i] = v / 1e9
					}
					w.rep.add(figure{ID: id, Section: s, Name: name, Unit: "s", Samples: samples, Note: note})
					return
				}
			}
		}
		w.rep.add(figure{ID: id, Section: s, Name: name, NotMeasured: bench + " not found in go-bench.txt"})
	}
	add("noop-poll", "no-op poll (ls-remote, ref unchanged), 1,000 commits × 200 files", "BenchmarkFetch/noop-poll", "internal/source BenchmarkFetch, smart HTTP, basic auth")
	add("shallow-clone", "fresh shallow clone, 1,000 commits × 200 files", "BenchmarkFetch/shallow-clone", "internal/source BenchmarkFetch")
	add("render-staging", "kustomize render per overlay (examples staging)", "BenchmarkRenderOverlay/staging", "internal/render, in-process kustomize")
	add("render-production", "kustomize render per overlay (examples production)", "BenchmarkRenderOverlay/production", "internal/render")
	add("apply100-first", "server-side apply of 100 ConfigMaps, first apply", "BenchmarkApply100/first", "internal/apply")
	add("apply100-idle", "server-side apply of 100 unchanged ConfigMaps", "BenchmarkApply100/idle", "internal/apply")
}
