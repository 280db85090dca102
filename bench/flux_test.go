//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"bggitops.dev/bg-gitops/internal/spawn"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// Flux v2 in the same run: source-controller and kustomize-controller
// (built by `make flux` from hack/tools/flux into bin/) as two processes on
// this run's control plane, against the same bare repositories, with one
// GitRepository + Kustomization pair per unit of the workload.

const fluxSection = "§6 Flux v2 in the same run"

var (
	fluxGitRepositoryGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
	fluxKustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
)

// The API server users of the two controllers: the audit log tells their
// requests apart from bg-gitops's (controllerUser) and the benchmark's.
const (
	fluxSourceUser    = "flux-source-controller"
	fluxKustomizeUser = "flux-kustomize-controller"
)

// fluxRequestedAt is Flux's reconcile-request annotation (`flux reconcile`).
const fluxRequestedAt = "reconcile.fluxcd.io/requestedAt"

// fluxModules are the Go modules of the controllers, whose module cache
// directories hold their CRDs (config/crd/bases).
var fluxModules = []string{"github.com/fluxcd/source-controller", "github.com/fluxcd/kustomize-controller"}

// fluxShared are the IDs of bg-gitops figures that Flux's run measures too
// (the comparison table gives them a Flux column even when Flux is not run).
// The figures of bg-gitops with leader election off (N=50) get the Flux
// column too: Flux runs without it.
var fluxShared = map[string]bool{
	"create-n50": true, "create-n500": true, "rss-n50": true, "rss-n500": true, "create-n50-nole": true, "rss-n50-nole": true,
	"commit-annotation-applied-n1": true, "commit-annotation-applied-n50": true,
	"idle-requests-n50": true, "idle-requests-n500": true, "idle-cpu-n50": true, "idle-cpu-n500": true,
	"requests-per-noop-n50": true, "requests-per-noop-n500": true,
}

// fluxWorld is what the Flux scenarios share: the CRDs installed once, a
// kubeconfig per controller, and the versions.
type fluxWorld struct {
	kubeconfig map[string]string // user → kubeconfig path
	source     string            // $BGGITOPS_BIN_DIR/flux-source-controller
	kustomize  string            // $BGGITOPS_BIN_DIR/flux-kustomize-controller
}

// fluxObj is what the tracker keeps of a Flux object.
type fluxObj struct {
	ready bool
	// rev is a GitRepository's artifact revision or a Kustomization's
	// lastAppliedRevision.
	rev string
	// wasReady: some watch event showed the object Ready with a revision.
	// Flux sets Ready to Unknown (Progressing) at the start of every
	// reconcile, so a busy kustomize-controller rarely shows all N Ready at
	// one instant; creation counts each from the first time it was Ready.
	wasReady bool
}

func fluxKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

func fluxReady(tr *tracker, ns, name, rev string) bool {
	o, ok := tr.flux[fluxKey("Kustomization", ns, name)]
	return ok && o.ready && o.rev != "" && (rev == "" || o.rev == rev)
}

// fluxSetup installs Flux's CRDs (read from the module cache, where `go
// mod download` in hack/tools/flux finds them), adds the controllers'
// users and starts watching GitRepositories and Kustomizations.
func (w *world) fluxSetup(t *testing.T) *fluxWorld {
	t.Helper()
	if w.flux != nil {
		return w.flux
	}
	root := moduleRoot()
	bin := os.Getenv(testenv.BinDirEnv) // the Makefile's bin/, where `make flux` builds
	if bin == "" {
		bin = filepath.Join(root, "bin")
	}
	fw := &fluxWorld{kubeconfig: map[string]string{}, source: filepath.Join(bin, "flux-source-controller"),
		kustomize: filepath.Join(bin, "flux-kustomize-controller")}
	for _, b := range []string{fw.source, fw.kustomize} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%s: run `make flux` first (or FLUX=0 to leave Flux out)", b)
		}
	}
	dirs, versions, err := fluxModuleDirs(filepath.Join(root, "hack", "tools", "flux"))
	if err != nil {
		t.Fatal(err)
	}
	for m, v := range versions {
		w.rep.Versions["flux "+strings.TrimPrefix(m, "github.com/fluxcd/")] = v
	}
	w.rep.Workload["Flux v2"] = fmt.Sprintf("source-controller %s and kustomize-controller %s (bin/flux-*, built by `make flux` from hack/tools/flux, CGO_ENABLED=0 -trimpath as their Dockerfiles do) as two processes, "+
		"each with a user of its own; Flux's default flags (source-controller --concurrent 2, kustomize-controller --concurrent 4, --concurrent-ssa 4) except what a local run needs: "+
		"--storage-path in a temporary directory, --storage-addr and --storage-adv-addr, --metrics-addr and --health-addr on free 127.0.0.1 ports, --watch-all-namespaces=true (the default), "+
		"--enable-leader-election=false (the flag's default: Flux's manifests turn it on, but outside a cluster controller-runtime has no namespace for the Lease), so no lease requests; "+
		"--kube-api-qps and --kube-api-burst left at their defaults, which apply only without API Priority and Fairness. "+
		"Per unit a GitRepository (interval 1m, branch main, the same bare repository) and a Kustomization (interval 1m, path ./deploy, prune, targetNamespace its own namespace); "+
		"creation rounds %d at N<500 and %d at N=500, each in a fresh namespace, deleted (Kustomizations first) between rounds",
		versions[fluxModules[0]], versions[fluxModules[1]], w.s.rounds, w.s.fluxBigRounds)
	var paths []string
	for _, d := range dirs {
		paths = append(paths, filepath.Join(d, "config", "crd", "bases"))
	}
	crds, err := envtest.InstallCRDs(w.env.Config, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true, MaxTime: time.Minute})
	if err != nil {
		t.Fatalf("install Flux CRDs: %v", err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	t.Logf("Flux CRDs installed from the module cache: %s", strings.Join(names, ", "))
	// The kubeconfigs outlive this scenario: later ones use them.
	dir := w.dir
	for _, u := range []string{fluxSourceUser, fluxKustomizeUser} {
		cfg, err := w.env.AddUser(u, "system:masters")
		if err != nil {
			t.Fatal(err)
		}
		if u == fluxSourceUser {
			w.rep.Workload["Flux v2"] += "; " + apfDetected(cfg)
		}
		fw.kubeconfig[u] = filepath.Join(dir, u+".kubeconfig")
		if err := writeKubeconfig(cfg, u, fw.kubeconfig[u]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.tr.watchFlux(w.ctx, w.cfg); err != nil {
		t.Fatal(err)
	}
	w.flux = fw
	return fw
}

// fluxModuleDirs asks `go mod download -json` in hack/tools/flux where the
// pinned controller modules are (downloading them if needed: `make flux`
// already did).
func fluxModuleDirs(toolsDir string) (dirs []string, versions map[string]string, err error) {
	cmd := exec.Command("go", append([]string{"mod", "download", "-json"}, fluxModules...)...)
	cmd.Dir = toolsDir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return nil, nil, fmt.Errorf("go mod download in %s: %w", toolsDir, err)
	}
	versions = map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); err != nil {
			return nil, nil, err
		}
		if m.Error != "" || m.Dir == "" {
			return nil, nil, fmt.Errorf("go mod download %s: %s", m.Path, m.Error)
		}
		dirs = append(dirs, m.Dir)
		versions[m.Path] = m.Version
	}
	return dirs, versions, nil
}

func serverURL(cfg *rest.Config) string {
	if strings.Contains(cfg.Host, "://") {
		return cfg.Host
	}
	return "https://" + cfg.Host
}

// writeKubeconfig writes a kubeconfig for cfg (client certificate) as user.
func writeKubeconfig(cfg *rest.Config, user, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: serverURL(cfg) + cfg.APIPath, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: user}
	kc.CurrentContext = "bench"
	return clientcmd.WriteToFile(*kc, path)
}

// apfDetected repeats Flux's check (fluxcd/cli-utils flowcontrol.IsEnabled,
// called by fluxcd/pkg/runtime/client.GetConfigOrDie): a HEAD of
// /livez/ping whose answer carries API Priority and Fairness's flow schema
// header means the controllers run without a client-side rate limiter.
func apfDetected(cfg *rest.Config) string {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return "API Priority and Fairness check failed: " + err.Error()
	}
	req, _ := http.NewRequest(http.MethodHead, strings.TrimSuffix(serverURL(cfg), "/")+"/livez/ping", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "API Priority and Fairness check failed: " + err.Error()
	}
	resp.Body.Close()
	if uid := resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"); uid != "" {
		return "the API server answers with API Priority and Fairness headers (X-Kubernetes-PF-FlowSchema-UID), so both controllers run without a client-side rate limiter"
	}
	return "the API server's answer has no API Priority and Fairness headers, so both controllers keep their client-side limiter (--kube-api-qps 50, --kube-api-burst 300)"
}

// watchFlux adds informers for Flux's GitRepositories and Kustomizations
// to the tracker (its own cache: the CRDs exist only from here on).
func (tr *tracker) watchFlux(ctx context.Context, cfg *rest.Config) error {
	c, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return err
	}
	for _, gvk := range []schema.GroupVersionKind{fluxGitRepositoryGVK, fluxKustomizationGVK} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		inf, err := c.GetInformer(ctx, u)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { tr.updateFlux(o, false) },
			UpdateFunc: func(_, o any) { tr.updateFlux(o, false) },
			DeleteFunc: func(o any) {
				if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				tr.updateFlux(o, true)
			},
		}); err != nil {
			return err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("Flux tracker cache did not sync")
	}
	return nil
}

func (tr *tracker) updateFlux(o any, deleted bool) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := fluxKey(u.GetKind(), u.GetNamespace(), u.GetName())
	var fo fluxObj
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			fo.ready = true
		}
	}
	switch u.GetKind() {
	case "GitRepository":
		fo.rev, _, _ = unstructured.NestedString(u.Object, "status", "artifact", "revision")
	case "Kustomization":
		fo.rev, _, _ = unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
	}
	tr.mu.Lock()
	if tr.flux == nil {
		tr.flux = map[string]fluxObj{}
	}
	if deleted {
		delete(tr.flux, key)
	} else {
		fo.wasReady = tr.flux[key].wasReady || (fo.ready && fo.rev != "")
		tr.flux[key] = fo
	}
	close(tr.notify)
	tr.notify = make(chan struct{})
	tr.mu.Unlock()
}

// startFluxController starts one Flux controller in its own process group
// (killed with the benchmark: Pdeathsig) and waits for /readyz.
func (w *world) startFluxController(t *testing.T, name, binary, user string, extra ...string) *controllerProc {
	t.Helper()
	dir := t.TempDir()
	p := &controllerProc{name: name, done: make(chan struct{}), group: true,
		metricsAddr: freeAddr(t), probe: freeAddr(t), logf: filepath.Join(w.logDir, name+".log")}
	// Flux serves pprof on its metrics address.
	p.pprof = p.metricsAddr
	args := append([]string{"--metrics-addr", p.metricsAddr, "--health-addr", p.probe,
		"--watch-all-namespaces=true", "--enable-leader-election=false"}, extra...)
	logFile, err := os.Create(p.logf)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "HOME=") {
			env = append(env, e)
		}
	}
	p.cmd.Env = append(env, "KUBECONFIG="+w.flux.kubeconfig[user], "HOME="+dir)
	// Pdeathsig fires when the thread that started the child exits:
	// spawn.Start forks from a thread that never does.
	if err := spawn.Start(p.cmd); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(syscall.SIGTERM) })
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited: %s", name, tailFile(p.logf))
		default:
		}
		if resp, err := http.Get("http://" + p.probe + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not ready: %s", name, tailFile(p.logf))
	return nil
}

// startFlux starts source-controller (artifact storage in a fresh
// directory, its server on the loopback) and kustomize-controller.
func (w *world) startFlux(t *testing.T, name string) (src, ks *controllerProc) {
	t.Helper()
	fw := w.fluxSetup(t)
	storage, data := freeAddr(t), t.TempDir()
	src = w.startFluxController(t, "flux-source-"+name, fw.source, fluxSourceUser,
		"--storage-path", data, "--storage-addr", storage, "--storage-adv-addr", storage)
	ks = w.startFluxController(t, "flux-kustomize-"+name, fw.kustomize, fluxKustomizeUser)
	return src, ks
}

func fluxObjects(ns string, i int, url string) (gr, ks *unstructured.Unstructured) {
	gr = &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": repoName(i), "namespace": ns},
		"spec":     map[string]any{"url": url, "interval": "1m", "ref": map[string]any{"branch": "main"}},
	}}
	gr.SetGroupVersionKind(fluxGitRepositoryGVK)
	ks = &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": repoName(i), "namespace": ns},
		"spec": map[string]any{"interval": "1m", "path": "./deploy", "prune": true, "targetNamespace": ns,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": repoName(i)}},
	}}
	ks.SetGroupVersionKind(fluxKustomizationGVK)
	return gr, ks
}

// fluxCreateAll creates n GitRepository + Kustomization pairs in ns (8 at
// a time, the GitRepository first) and returns when every Kustomization
// has been Ready with an applied revision: the time from the first create.
func (w *world) fluxCreateAll(t *testing.T, ns string, n int) time.Duration {
	t.Helper()
	w.namespace(t, ns)
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, 2*n)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				gr, ks := fluxObjects(ns, i, w.git.URL+"/"+repoName(i)+".git")
				for _, o := range []client.Object{gr, ks} {
					if err := w.c.Create(ctx, o); err != nil {
						errs <- err
					}
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
	end, err := w.tr.waitFor(ctx, 15*time.Minute, fmt.Sprintf("%d Flux Kustomizations Ready in %s", n, ns), func(tr *tracker) bool {
		ready := 0
		for i := range n {
			if tr.flux[fluxKey("Kustomization", ns, repoName(i))].wasReady {
				ready++
			}
		}
		return ready == n
	})
	if err != nil {
		t.Fatal(err)
	}
	return end.Sub(start)
}

// fluxDeleteAll deletes the Kustomizations of ns (kustomize-controller
// prunes their ConfigMaps), then the GitRepositories, and waits until both
// are gone.
func (w *world) fluxDeleteAll(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, gvk := range []schema.GroupVersionKind{fluxKustomizationGVK, fluxGitRepositoryGVK} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := w.c.DeleteAllOf(ctx, u, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		prefix := fluxKey(gvk.Kind, ns, "")
		if _, err := w.tr.waitFor(ctx, 10*time.Minute, fmt.Sprintf("Flux %ss deleted in %s", gvk.Kind, ns), func(tr *tracker) bool {
			for k := range tr.flux {
				if strings.HasPrefix(k, prefix) {
					return false
				}
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// fluxScalePhase measures Flux at one N as scalePhase measures bg-gitops:
// creation rounds, the idle minute (N ≥ 50), commit + annotation → applied
// (N ≤ 50) and peak RSS, both controllers fresh for the scenario.
func (w *world) fluxScalePhase(t *testing.T, n int) {
	name := fmt.Sprintf("n%d", n)
	label := fmt.Sprintf("Flux, N=%d", n)
	rounds := w.s.rounds
	if n >= 500 {
		rounds = w.s.fluxBigRounds
	}
	w.ensureRepos(t, n)
	src, ks := w.startFlux(t, name)
	var create []float64
	var lastNS string
	cpu := cpuTimes{}
	for r := 1; r <= rounds; r++ {
		ns := fmt.Sprintf("flux-%s-r%d", name, r)
		c0 := w.snapshotCPU(src, ks)
		off, from := w.audit.offset(), time.Now()
		g0 := w.git.busy()
		d := w.fluxCreateAll(t, ns, n)
		cpu.add(c0, w.snapshotCPU(src, ks))
		if r == rounds {
			to := time.Now()
			w.rep.Extra["creation, "+label+", last round: API server time for source-controller's requests"] = w.audit.serverTime(off, fluxSourceUser, from, to)
			w.rep.Extra["creation, "+label+", last round: API server time for kustomize-controller's requests"] = w.audit.serverTime(off, fluxKustomizeUser, from, to)
			w.rep.Extra["creation, "+label+", last round: git server time"] = w.git.busySince(g0)
		}
		t.Logf("flux %s round %d: %d Ready in %s", name, r, n, d.Round(time.Millisecond))
		create = append(create, d.Seconds())
		if r < rounds {
			w.fluxDeleteAll(t, ns)
		}
		lastNS = ns
	}
	w.rep.add(figure{ID: "flux-create-" + name, Section: fluxSection, Name: "creation → all Ready, " + label, Unit: "s", Samples: create,
		Compare: []string{"create-" + name, "create-" + name + "-nole"},
		Note:    "until every Kustomization has been seen Ready with an applied revision (each from its first such watch event: Flux marks Ready Unknown while it reconciles)"})
	total := 0.0
	for _, c := range create {
		total += c
	}
	w.rep.Extra["creation rounds, "+label+": CPU by process"] = fmt.Sprintf("%.1f s of wall time over %d rounds (%.0f core-seconds on %d cores): %s",
		total, rounds, total*float64(runtime.NumCPU()), runtime.NumCPU(), cpu)

	if n >= 50 {
		w.fluxIdleMinute(t, src, ks, n, label)
	}
	if n <= 50 {
		w.fluxLatencyRounds(t, lastNS, n, label)
	}
	rs, rk := float64(src.peakRSS())/(1<<20), float64(ks.peakRSS())/(1<<20)
	w.rep.add(figure{ID: "flux-rss-" + name, Section: fluxSection, Name: "peak RSS (VmHWM) of both controllers, " + label, Unit: "MiB", Samples: []float64{rs + rk},
		Compare: []string{"rss-" + name, "rss-" + name + "-nole"},
		Note:    fmt.Sprintf("source-controller %.0f MiB + kustomize-controller %.0f MiB, each over the whole scenario", rs, rk)})
	ctx := context.Background()
	w.rep.Extra["memory at the end, "+label+", source-controller"] = w.memory(ctx, src)
	w.rep.Extra["memory at the end, "+label+", kustomize-controller"] = w.memory(ctx, ks)
	w.fluxDeleteAll(t, lastNS)
	ks.stop(syscall.SIGTERM)
	src.stop(syscall.SIGTERM)
}

// fluxIdleMinute measures what n Ready pairs cost Flux per idle minute, as
// idleMinute does for bg-gitops.
func (w *world) fluxIdleMinute(t *testing.T, src, ks *controllerProc, n int, label string) {
	time.Sleep(5 * time.Second)
	off := w.audit.offset()
	from := time.Now()
	s0, k0 := src.cpuSeconds(), ks.cpuSeconds()
	ms0, mk0 := src.scrape(), ks.scrape()
	l0, u0 := w.git.counts()
	time.Sleep(w.s.idle)
	to := time.Now()
	s1, k1 := src.cpuSeconds(), ks.cpuSeconds()
	ms1, mk1 := src.scrape(), ks.scrape()
	l1, u1 := w.git.counts()
	time.Sleep(2 * time.Second) // let the audit log catch up
	perMin := time.Minute.Seconds() / to.Sub(from).Seconds()
	var raw, pm [2]requestCounts
	for i, u := range []string{fluxSourceUser, fluxKustomizeUser} {
		counts, err := w.audit.count(off, u, from, to)
		if err != nil {
			t.Fatal(err)
		}
		raw[i], pm[i] = counts, counts.scaled(perMin)
	}
	w.rep.Idle[label+", source-controller"] = pm[0]
	w.rep.Idle[label+", kustomize-controller"] = pm[1]
	total, writes := pm[0].Total+pm[1].Total, pm[0].Writes+pm[1].Writes
	delta := func(a, b metricsText, name, match string) float64 { return b.sum(name, match) - a.sum(name, match) }
	grN := delta(ms0, ms1, "controller_runtime_reconcile_total", `controller="gitrepository"`)
	ksN := delta(mk0, mk1, "controller_runtime_reconcile_total", `controller="kustomization"`)
	grRec, ksRec := grN*perMin, ksN*perMin
	// Busy workers: time inside Reconcile over the window (the
	// Kustomization reconciles due in a minute may not all fit in it).
	window := to.Sub(from).Seconds()
	grBusy := delta(ms0, ms1, "controller_runtime_reconcile_time_seconds_sum", `controller="gitrepository"`) / window
	ksBusy := delta(mk0, mk1, "controller_runtime_reconcile_time_seconds_sum", `controller="kustomization"`) / window
	suffix := fmt.Sprint(n)
	fpr := figure{ID: "flux-requests-per-noop-n" + suffix, Name: "API requests per no-op reconcile (GitRepository + Kustomization of 3 objects), " + label, NotMeasured: "no reconcile ran in the idle window",
		Compare: []string{"requests-per-noop-n" + suffix}}
	if grRec > 0 && ksRec > 0 {
		// Ratios of the counts in the window (the per-minute figures are
		// rounded to whole requests).
		perGR := float64(raw[0].Total) / grN
		perKS := float64(raw[1].Total) / ksN
		fpr.NotMeasured, fpr.Unit = "", "requests"
		fpr.Samples = []float64{perGR + perKS}
		fpr.Note = fmt.Sprintf("source-controller %.1f per GitRepository reconcile + kustomize-controller %.1f per Kustomization reconcile", perGR, perKS)
	}
	for _, f := range []figure{
		{ID: "flux-idle-requests-n" + suffix, Name: "API requests per idle minute, " + label, Unit: "requests", Samples: []float64{float64(total)},
			Compare: []string{"idle-requests-n" + suffix},
			Note: fmt.Sprintf("source-controller %d + kustomize-controller %d; %.0f GitRepository and %.0f Kustomization reconciles in the minute, %.1f of 2 and %.1f of 4 workers busy on average; no leader election, so no lease requests",
				pm[0].Total, pm[1].Total, grRec, ksRec, grBusy, ksBusy)},
		fpr,
		{ID: "flux-idle-writes-n" + suffix, Name: "write requests per idle minute, " + label, Unit: "writes", Samples: []float64{float64(writes)},
			Compare: []string{"idle-writes-n" + suffix}, Note: fmt.Sprintf("source-controller %d + kustomize-controller %d", pm[0].Writes, pm[1].Writes)},
		{ID: "flux-idle-cpu-n" + suffix, Name: "CPU per idle minute of both controllers, " + label, Unit: "CPU-s", Samples: []float64{((s1 - s0) + (k1 - k0)) * perMin},
			Compare: []string{"idle-cpu-n" + suffix},
			Note:    fmt.Sprintf("source-controller %.2f + kustomize-controller %.2f CPU-s (utime+stime from /proc/PID/stat)", (s1-s0)*perMin, (k1-k0)*perMin)},
		{ID: "flux-idle-git-n" + suffix, Name: "git requests per idle minute, " + label, Unit: "requests", Samples: []float64{float64(l1-l0+u1-u0) * perMin},
			Compare: []string{"idle-git-n" + suffix},
			Note:    fmt.Sprintf("%.0f ref listings, %.0f upload-packs", float64(l1-l0)*perMin, float64(u1-u0)*perMin)},
	} {
		f.Section = fluxSection
		w.rep.add(f)
	}
}

// fluxLatencyRounds: new commit + reconcile.fluxcd.io/requestedAt on the
// GitRepository → the Kustomization Ready with the new revision applied.
func (w *world) fluxLatencyRounds(t *testing.T, ns string, n int, label string) {
	ctx := context.Background()
	var lat []float64
	for r := 0; r < w.s.rounds; r++ {
		i := r % n
		sha := w.git.commit(t, repoName(i), workloadFiles(i, fmt.Sprintf("flux-latency-%d-%d", r, time.Now().UnixNano())), "change")
		rev := "main@sha1:" + sha
		start := time.Now()
		gr := &unstructured.Unstructured{}
		gr.SetGroupVersionKind(fluxGitRepositoryGVK)
		gr.SetNamespace(ns)
		gr.SetName(repoName(i))
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, fluxRequestedAt, start.Format(time.RFC3339Nano)))
		if err := w.c.Patch(ctx, gr, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		end, err := w.tr.waitFor(ctx, 2*time.Minute, "Flux applied "+rev, func(tr *tracker) bool { return fluxReady(tr, ns, repoName(i), rev) })
		if err != nil {
			t.Fatal(err)
		}
		lat = append(lat, end.Sub(start).Seconds())
		time.Sleep(200 * time.Millisecond)
	}
	w.rep.add(figure{ID: "flux-commit-annotation-applied-n" + fmt.Sprint(n), Section: fluxSection, Name: "commit + annotation → applied, " + label, Unit: "s", Samples: lat,
		Compare: []string{"commit-annotation-applied-n" + fmt.Sprint(n)},
		Note:    "from the requestedAt patch on the GitRepository to the watch event showing the Kustomization Ready with the new lastAppliedRevision (source-controller fetches and stores the artifact, kustomize-controller downloads, builds and applies it)"})
}

// fluxPhase runs Flux at every N of BENCH_SCALES.
func (w *world) fluxPhase(t *testing.T) {
	for _, n := range w.s.scales {
		if !t.Run(fmt.Sprintf("n%d", n), func(t *testing.T) { w.fluxScalePhase(t, n) }) {
			return
		}
	}
}
