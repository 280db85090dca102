//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// controllerProc is a `bg-gitops controller` process: RSS, CPU time and
// SIGKILL are those of a real process.
type controllerProc struct {
	name                                      string
	cmd                                       *exec.Cmd
	done                                      chan struct{}
	metricsAddr, probe, receiver, pprof, logf string
	stopped                                   bool
	// group: the process leads its own process group, which stop signals.
	group bool
	// treePeakKB is the highest sum of VmRSS of the process and its
	// descendants (its fetch and render workers) seen by sampleTree.
	treePeakKB atomic.Int64
}

type controllerArgs struct {
	leaderElect bool
	leaseNS     string
	selector    string
	extra       []string
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startController starts bin/bg-gitops-image controller and waits for /readyz.
func (w *world) startController(t *testing.T, name string, a controllerArgs) *controllerProc {
	t.Helper()
	dir := t.TempDir()
	p := &controllerProc{name: name, done: make(chan struct{}),
		metricsAddr: freeAddr(t), probe: freeAddr(t), receiver: freeAddr(t), pprof: freeAddr(t),
		logf: filepath.Join(w.logDir, name+".log")}
	args := []string{"controller", "--kubeconfig", w.env.Kubeconfig,
		"--metrics-bind-address", p.metricsAddr, "--health-probe-bind-address", p.probe,
		"--receiver-bind-address", p.receiver, "--pprof-bind-address", p.pprof,
		"--cache-dir", filepath.Join(dir, "cache"),
		"--leader-elect=" + strconv.FormatBool(a.leaderElect),
		// A local setup: Gitea and git over plain HTTP on the loopback.
		"--allow-insecure-http", "--allow-file-urls"}
	if a.leaseNS != "" {
		args = append(args, "--leader-election-namespace", a.leaseNS)
	}
	if a.selector != "" {
		args = append(args, "--watch-label-selector", a.selector)
	}
	args = append(args, a.extra...)
	logFile, err := os.Create(p.logf)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(w.binary, args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.Env = append(os.Environ(), "HOME="+dir)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); logFile.Close(); close(p.done) }()
	go p.sampleTree()
	t.Cleanup(func() { p.stop(syscall.SIGTERM) })
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("controller %s exited: %s", name, tailFile(p.logf))
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
	t.Fatalf("controller %s not ready: %s", name, tailFile(p.logf))
	return nil
}

func (p *controllerProc) pid() int { return p.cmd.Process.Pid }

// stop signals the process (by PID) and waits for it; SIGKILL after 20s.
func (p *controllerProc) stop(sig syscall.Signal) {
	if p.stopped {
		return
	}
	p.stopped = true
	p.kill(sig)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.kill(syscall.SIGKILL)
		<-p.done
	}
}

// kill sends sig to the process, or to its process group when it leads
// one (by its PID, while it has not been reaped).
func (p *controllerProc) kill(sig syscall.Signal) {
	if p.group {
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-p.pid(), sig)
		}
		return
	}
	_ = p.cmd.Process.Signal(sig)
}

// signal sends sig without waiting.
func (p *controllerProc) signal(sig syscall.Signal) {
	p.stopped = true
	_ = p.cmd.Process.Signal(sig)
}

func (p *controllerProc) wait() { <-p.done }

// waitLog waits until the process's log holds substr.
func (p *controllerProc) waitLog(t *testing.T, substr string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if data, err := os.ReadFile(p.logf); err == nil && strings.Contains(string(data), substr) {
			return
		}
	}
	t.Fatalf("controller %s did not log %q within %s: %s", p.name, substr, timeout, tailFile(p.logf))
}

// peakRSS is VmHWM in bytes.
func (p *controllerProc) peakRSS() int64 { return procStatusKB(p.pid(), "VmHWM") * 1024 }

// treeSample is how often sampleTree adds up the process tree's memory.
const treeSample = 50 * time.Millisecond

// treePeakRSS is the highest resident memory of the controller and its
// workers together, in bytes, as sampled every treeSample (a worker that
// lives less than that may be missed).
func (p *controllerProc) treePeakRSS() int64 { return p.treePeakKB.Load() * 1024 }

// sampleTree records the sum of VmRSS over the process and its
// descendants until the process ends.
func (p *controllerProc) sampleTree() {
	tick := time.NewTicker(treeSample)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		if kb := treeRSSKB(p.pid()); kb > p.treePeakKB.Load() {
			p.treePeakKB.Store(kb)
		}
	}
}

// treeRSSKB is the VmRSS of pid and all its descendants, in KiB.
func treeRSSKB(pid int) int64 {
	kb := procStatusKB(pid, "VmRSS")
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(c); err == nil {
				kb += treeRSSKB(child)
			}
		}
	}
	return kb
}

func procStatusKB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// cpuSeconds is utime+stime of the process and of the children it has
// waited for (cutime+cstime: its fetch and render workers).
func (p *controllerProc) cpuSeconds() float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid()))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	// cutime and cstime are fields 16 and 17.
	var sum float64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseFloat(fields[i], 64)
		sum += v
	}
	return sum / clockTicks
}

const clockTicks = 100 // sysconf(_SC_CLK_TCK) on Linux

// metric sums the samples of a Prometheus metric whose labels contain all
// of match (e.g. `controller="gitrepository"`).
func (p *controllerProc) metric(name string, match ...string) float64 {
	return p.scrape().sum(name, match...)
}

// metricsText is one scrape of the controller's /metrics.
type metricsText []string

func (p *controllerProc) scrape() metricsText {
	resp, err := http.Get("http://" + p.metricsAddr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.Split(string(body), "\n")
}

func (m metricsText) sum(name string, match ...string) float64 {
	sum := 0.0
lines:
	for _, l := range m {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		for _, x := range match {
			if !strings.Contains(l, x) {
				continue lines
			}
		}
		f := strings.Fields(l)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		sum += v
	}
	return sum
}

// clientTime summarises the controller's own view between two scrapes:
// API requests sent, and GitRepository reconciles (time in Reconcile and
// time waiting in the work queue). controller-runtime does not enable
// client-go's latency and rate-limiter metrics, so those come from the
// audit log instead.
func clientTime(a, b metricsText) string {
	d := func(name string, match ...string) float64 { return b.sum(name, match...) - a.sum(name, match...) }
	div := func(x, y float64) float64 {
		if y == 0 {
			return 0
		}
		return x / y
	}
	reqs := d("rest_client_requests_total")
	recN := d("controller_runtime_reconcile_time_seconds_count", `controller="gitrepository"`)
	recS := d("controller_runtime_reconcile_time_seconds_sum", `controller="gitrepository"`)
	qN := d("workqueue_queue_duration_seconds_count", `name="gitrepository"`)
	qS := d("workqueue_queue_duration_seconds_sum", `name="gitrepository"`)
	return fmt.Sprintf("%.0f API requests (%.1f per reconcile); %.0f GitRepository reconciles taking %.1f s in total (%.0f ms each on average, 4 workers); work-queue wait %.0f ms per item on average",
		reqs, div(reqs, recN), recN, recS, 1000*div(recS, recN), 1000*div(qS, qN))
}

// profile saves a pprof profile (kind "heap", or "profile" with seconds).
func (p *controllerProc) profile(ctx context.Context, kind string, seconds int, out string) error {
	url := "http://" + p.pprof + "/debug/pprof/" + kind
	if seconds > 0 {
		url += "?seconds=" + strconv.Itoa(seconds)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

func tailFile(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 3000 {
		data = data[len(data)-3000:]
	}
	return string(data)
}

// cpuTimes are CPU seconds (utime+stime) by process, to see which process
// a scenario's wall time went to on the shared cores.
type cpuTimes map[string]float64

func procCPU(pid int, withChildren bool) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	sum := 0.0
	idx := []int{11, 12} // utime, stime
	if withChildren {
		idx = append(idx, 13, 14) // cutime, cstime: waited-for children (git http-backend, Gitea's git)
	}
	for _, i := range idx {
		v, _ := strconv.ParseFloat(f[i], 64)
		sum += v
	}
	return sum / clockTicks
}

// childrenNamed returns the PIDs of this process's children whose command
// is name (envtest starts kube-apiserver and etcd as children).
func childrenNamed(name string) []int {
	me := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		open, closeIdx := strings.Index(s, "("), strings.LastIndex(s, ")")
		if open < 0 || closeIdx < open {
			continue
		}
		f := strings.Fields(s[closeIdx+2:])
		if s[open+1:closeIdx] == name && len(f) > 1 && f[1] == strconv.Itoa(me) {
			out = append(out, pid)
		}
	}
	return out
}

func (w *world) snapshotCPU(procs ...*controllerProc) cpuTimes {
	c := cpuTimes{"benchmark process + git http-backend": procCPU(os.Getpid(), true)}
	if w.git.forge != nil {
		// Gitea waits for its git processes, so its children count too.
		c = cpuTimes{"benchmark process": procCPU(os.Getpid(), true), "gitea": procCPU(w.git.forge.PID(), true)}
	}
	for _, p := range procs {
		c["controller "+p.name] = procCPU(p.pid(), false)
	}
	for _, n := range []string{"kube-apiserver", "etcd"} {
		for _, pid := range childrenNamed(n) {
			c[n] += procCPU(pid, false)
		}
	}
	return c
}

func (c cpuTimes) add(a, b cpuTimes) {
	for k, v := range b {
		c[k] += v - a[k]
	}
}

func (c cpuTimes) String() string {
	var parts []string
	total := 0.0
	for _, k := range sortedKeys(c) {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, c[k]))
		total += c[k]
	}
	return fmt.Sprintf("%s (total %.1f CPU-s)", strings.Join(parts, ", "), total)
}

// sampleWorkers is a wall-clock profile of the GitRepository workers: it
// takes goroutine dumps every interval for d and counts, for each worker
// inside Reconcile, the innermost bg-gitops function on its stack and the
// goroutine's state. CPU profiles miss time spent waiting (API server, git
// server, CPU run queue); this shows it.
func (p *controllerProc) sampleWorkers(ctx context.Context, interval, d time.Duration) string {
	counts := map[string]int{}
	samples, busy := 0, 0
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		resp, err := http.Get("http://" + p.pprof + "/debug/pprof/goroutine?debug=2")
		if err != nil {
			break
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		samples++
		for _, g := range strings.Split(string(body), "\n\n") {
			if !strings.Contains(g, "GitRepositoryReconciler).Reconcile") {
				continue
			}
			busy++
			lines := strings.Split(g, "\n")
			state := lines[0]
			if i := strings.Index(state, "["); i >= 0 {
				state = strings.TrimSuffix(state[i+1:], "]:")
				state, _, _ = strings.Cut(state, ",")
			}
			ours := "?"
			for _, l := range lines[1:] {
				if strings.HasPrefix(l, "bggitops.dev/bg-gitops/") {
					ours = strings.TrimPrefix(l, "bggitops.dev/bg-gitops/")
					if i := strings.LastIndex(ours, "("); i > 0 {
						ours = ours[:i]
					}
					break
				}
			}
			switch {
			case strings.Contains(g, "flowcontrol.") || strings.Contains(g, "x/time/rate."):
				state = "client-side rate limiter"
			case strings.Contains(g, "net/http.") || strings.Contains(g, "http2."):
				state = "HTTP request in flight, " + state
			}
			counts[ours+" ["+state+"]"]++
		}
		time.Sleep(interval)
	}
	if busy == 0 {
		return fmt.Sprintf("%d samples, no worker inside Reconcile", samples)
	}
	keys := sortedKeys(counts)
	sort.SliceStable(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	var parts []string
	for i, k := range keys {
		if i == 10 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*float64(counts[k])/float64(busy)))
	}
	return fmt.Sprintf("%d dumps, %.1f workers busy on average; where busy workers were: %s", samples, float64(busy)/float64(samples), strings.Join(parts, "; "))
}
