//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// figure is one measured quantity: its samples (one per round), median and
// spread. Targets are compared in the report, never asserted.
type figure struct {
	ID      string    `json:"id"`
	Section string    `json:"section"`
	Name    string    `json:"name"`
	Unit    string    `json:"unit"`
	Samples []float64 `json:"samples"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	// Target is the target as text; Met is nil without a target or
	// without samples. Lower is better for every target.
	Target    string   `json:"target,omitempty"`
	TargetMax *float64 `json:"target_max,omitempty"`
	Met       *bool    `json:"met,omitempty"`
	Note      string   `json:"note,omitempty"`
	// NotMeasured says why there are no samples.
	NotMeasured string `json:"not_measured,omitempty"`

	// Compare, on a Flux figure, names the IDs of the bg-gitops figures it
	// is the Flux column of.
	Compare []string `json:"compare,omitempty"`
}

type profileSummary struct {
	Name string `json:"name"`
	File string `json:"file"`
	Top  string `json:"top"`
}

type goBenchResult struct {
	Name    string               `json:"name"`
	Package string               `json:"package"`
	Metrics map[string][]float64 `json:"metrics"`
}

type report struct {
	mu        sync.Mutex
	Started   time.Time                `json:"started"`
	Finished  time.Time                `json:"finished"`
	Machine   map[string]string        `json:"machine"`
	Versions  map[string]string        `json:"versions"`
	Workload  map[string]string        `json:"workload"`
	Figures   []*figure                `json:"figures"`
	Idle      map[string]requestCounts `json:"idle_requests_per_minute"`
	Extra     map[string]string        `json:"extra"`
	Profiles  []profileSummary         `json:"profiles"`
	GoBench   []goBenchResult          `json:"go_benchmarks"`
	Failures  []string                 `json:"failures,omitempty"`
	outputDir string
	// /proc/stat at the start: CPU ticks in all and stolen.
	cpuTotal0, steal0 float64

	// FluxNotRun says why Flux was not run ("" when it was).
	FluxNotRun string `json:"flux_not_run,omitempty"`
}

func newReport(dir, fluxNotRun string) *report {
	r := &report{Started: time.Now(), Machine: machine(), Versions: versions(), Workload: map[string]string{},
		Idle: map[string]requestCounts{}, Extra: map[string]string{}, FluxNotRun: fluxNotRun, outputDir: dir}
	r.cpuTotal0, r.steal0 = cpuStat()
	return r
}

// add records a figure; samples may be empty with notMeasured set.
func (r *report) add(f figure) *figure {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(f.Samples) > 0 {
		s := append([]float64(nil), f.Samples...)
		sort.Float64s(s)
		f.Min, f.Max = s[0], s[len(s)-1]
		if n := len(s); n%2 == 1 {
			f.Median = s[n/2]
		} else {
			f.Median = (s[n/2-1] + s[n/2]) / 2
		}
		if f.TargetMax != nil {
			met := f.Median <= *f.TargetMax
			f.Met = &met
		}
	}
	r.Figures = append(r.Figures, &f)
	return &f
}

func (r *report) fail(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Failures = append(r.Failures, fmt.Sprintf(format, a...))
}

func target(v float64) *float64 { return &v }

func machine() map[string]string {
	m := map[string]string{"cores": strconv.Itoa(runtime.NumCPU()), "os/arch": runtime.GOOS + "/" + runtime.GOARCH}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				m["cpu"] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if kb := procStatusKBFile("/proc/meminfo", "MemTotal"); kb > 0 {
		m["memory"] = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		m["loadavg at start"] = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	m["cpu gauge at start"] = cpuGauge()
	return m
}

// cpuGauge times two fixed single-threaded workloads, so that runs on
// the same kind of machine can be compared: the first touch of 64 MiB of
// fresh memory (page faults: the kernel's and hypervisor's share, which
// process starts and every git http-backend request pay) and SHA-256 of
// those 64 MiB (CPU alone). A slower gauge means a slower or busier
// machine, not slower code.
func cpuGauge() string {
	start := time.Now()
	// Fresh pages from the kernel each time (the Go heap might reuse
	// pages it already has).
	buf, err := syscall.Mmap(-1, 0, 64<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return "not measured: " + err.Error()
	}
	defer func() { _ = syscall.Munmap(buf) }()
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	touch := time.Since(start)
	start = time.Now()
	_ = sha256.Sum256(buf)
	return fmt.Sprintf("first touch of 64 MiB in %d ms (%.1f µs per 4 KiB page); SHA-256 of it in %d ms",
		touch.Milliseconds(), float64(touch.Microseconds())/float64(len(buf)/4096), time.Since(start).Milliseconds())
}

// cpuStat is the machine's CPU time from /proc/stat, in clock ticks: all of
// it, and the part the hypervisor gave to other guests (steal).
func cpuStat() (total, steal float64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fs := strings.Fields(line)
	for i := 1; i < len(fs) && i <= 8; i++ { // guest time is counted in user already
		v, _ := strconv.ParseFloat(fs[i], 64)
		total += v
		if i == 8 {
			steal = v
		}
	}
	return total, steal
}

func procStatusKBFile(path, field string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// versions: the kube-apiserver and etcd binaries are built from the pinned
// tools modules under hack/tools (the apiserver built that way reports
// v0.0.0-master), so their versions are read from those go.mod files.
func versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	root := moduleRoot()
	pin := func(file, module string) string {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return "unknown"
		}
		for _, l := range strings.Split(string(data), "\n") {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "require "))
			if len(f) >= 2 && f[0] == module {
				return f[1]
			}
		}
		return "unknown"
	}
	v["kubernetes (kube-apiserver)"] = pin("hack/tools/kubernetes/go.mod", "k8s.io/kubernetes")
	v["etcd"] = pin("hack/tools/etcd/go.mod", "go.etcd.io/etcd/server/v3")
	v["gitea"] = pin("hack/tools/gitea/go.mod", "code.gitea.io/gitea")
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		v["git (http-backend)"] = strings.TrimSpace(strings.TrimPrefix(string(out), "git version"))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "sigs.k8s.io/controller-runtime", "k8s.io/client-go", "github.com/go-git/go-git/v5", "sigs.k8s.io/kustomize/api":
				v[d.Path] = d.Version
			}
		}
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		v["bg-gitops commit"] = strings.TrimSpace(string(out))
		// bin/bg-gitops-image is built from the working tree, which can hold
		// uncommitted work.
		if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", "api", "internal", "cmd").Output(); err == nil && len(st) > 0 {
			v["bg-gitops commit"] += " + uncommitted changes in the working tree"
		}
	}
	return v
}

func moduleRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// parseGoBench reads `go test -bench` output (benchstat's input format).
func parseGoBench(path string) ([]goBenchResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byName := map[string]*goBenchResult{}
	var order []string
	pkg := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if v, ok := strings.CutPrefix(l, "pkg: "); ok {
			pkg = v
			continue
		}
		fs := strings.Fields(l)
		if !strings.HasPrefix(l, "Benchmark") || len(fs) < 4 || len(fs)%2 != 0 {
			continue
		}
		key := pkg + " " + fs[0]
		g := byName[key]
		if g == nil {
			g = &goBenchResult{Name: fs[0], Package: pkg, Metrics: map[string][]float64{}}
			byName[key] = g
			order = append(order, key)
		}
		for i := 2; i+1 < len(fs); i += 2 {
			if v, err := strconv.ParseFloat(fs[i], 64); err == nil {
				g.Metrics[fs[i+1]] = append(g.Metrics[fs[i+1]], v)
			}
		}
	}
	out := make([]goBenchResult, 0, len(order))
	for _, k := range order {
		out = append(out, *byName[k])
	}
	return out, sc.Err()
}

// renderAgain rewrites results.md from results.json (after notes.md was
// edited), without running anything.
func renderAgain(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	r := &report{outputDir: dir}
	if err := json.Unmarshal(data, r); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(r.markdown()), 0o644)
}

func (r *report) write() error {
	r.Finished = time.Now()
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.Machine["loadavg at end"] = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	r.Machine["cpu gauge at end"] = cpuGauge()
	if total, steal := cpuStat(); total > r.cpuTotal0 {
		r.Machine["cpu stolen by the hypervisor during the run"] = fmt.Sprintf("%.1f %%", 100*(steal-r.steal0)/(total-r.cpuTotal0))
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.outputDir, "results.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.outputDir, "results.md"), []byte(r.markdown()), 0o644)
}

func fmtVal(v float64, unit string) string {
	switch {
	case unit == "s" && v < 1:
		return fmt.Sprintf("%.3f s", v)
	case unit == "s":
		return fmt.Sprintf("%.2f s", v)
	case unit == "MiB":
		return fmt.Sprintf("%.0f MiB", v)
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f %s", v, unit)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

func (f *figure) medianText() string {
	if len(f.Samples) == 0 {
		return "not measured"
	}
	return fmtVal(f.Median, f.Unit)
}

func (f *figure) spreadText() string {
	switch len(f.Samples) {
	case 0:
		return "–"
	case 1:
		return "1 run"
	}
	return fmt.Sprintf("%s – %s (%d runs)", strings.TrimSuffix(fmtVal(f.Min, f.Unit), " "+f.Unit), fmtVal(f.Max, f.Unit), len(f.Samples))
}

func (f *figure) status() string {
	switch {
	case f.Target == "":
		return ""
	case f.Met == nil:
		return "not measured"
	case *f.Met:
		return "met"
	default:
		return "**missed**"
	}
}

func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# bg-gitops benchmark results\n\n")
	p("Written by `make bench` (hack/bench.sh → `go test ./bench`) on %s; the run took %s. ", r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Finished.Sub(r.Started).Round(time.Second))
	p("Every figure below comes from that run. Figures are reported, never asserted. Median and spread (min – max) are over the rounds named; a single run has no spread.\n\n")
	p("## Machine and versions\n\n| | |\n|---|---|\n")
	for _, k := range sortedKeys(r.Machine) {
		p("| %s | %s |\n", k, r.Machine[k])
	}
	for _, k := range sortedKeys(r.Versions) {
		p("| %s | %s |\n", k, r.Versions[k])
	}
	p("\n## Workload\n\n")
	for _, k := range sortedKeys(r.Workload) {
		p("- **%s**: %s\n", k, r.Workload[k])
	}
	r.comparison(p)
	sections := []string{}
	for _, f := range r.Figures {
		if !contains(sections, f.Section) {
			sections = append(sections, f.Section)
		}
	}
	p("\n## All figures\n")
	for _, s := range sections {
		p("\n### %s\n\n| figure | median | spread | target | | note |\n|---|---|---|---|---|---|\n", s)
		for _, f := range r.Figures {
			if f.Section != s {
				continue
			}
			note := f.Note
			if f.NotMeasured != "" {
				note = strings.TrimSpace("not measured: " + f.NotMeasured + " " + note)
			}
			p("| %s | %s | %s | %s | %s | %s |\n", f.Name, f.medianText(), f.spreadText(), f.Target, f.status(), note)
		}
	}
	if len(r.Idle) > 0 {
		p("\n## API requests per idle minute, by verb and resource\n\nFrom the API server's audit log (each controller's own user only: bg-gitops's kubeconfig user, or one per Flux controller), over a window of BENCH_IDLE (60 s by default) that starts 5 s after every GitRepository (Flux: Kustomization) is Ready, scaled to a minute. \"(dry-run)\" marks server-side-apply dry runs, which write nothing.\n")
		for _, k := range sortedKeys(r.Idle) {
			c := r.Idle[k]
			p("\n**%s**: %d requests, %d writes (%d of them lease renewals), %d lease requests.\n\n| verb resource | per minute |\n|---|---|\n", k, c.Total, c.Writes, c.LeaseWrites, c.Leases)
			for _, vr := range sortedKeys(c.ByResource) {
				p("| %s | %d |\n", vr, c.ByResource[vr])
			}
		}
	}
	if len(r.GoBench) > 0 {
		p("\n## Go benchmarks\n\nRaw output (benchstat input): `bench/go-bench.txt`. Median and spread over `-count` runs.\n\n| benchmark | metric | median | spread |\n|---|---|---|---|\n")
		for _, g := range r.GoBench {
			for _, unit := range sortedKeys(g.Metrics) {
				f := figure{Samples: g.Metrics[unit], Unit: unit}
				f = *(&report{}).addQuiet(f)
				p("| %s %s | %s | %s | %s |\n", shortPkg(g.Package), g.Name, unit, fmtNum(f.Median), fmt.Sprintf("%s – %s (%d)", fmtNum(f.Min), fmtNum(f.Max), len(f.Samples)))
			}
		}
	}
	if len(r.Extra) > 0 {
		p("\n## Other observations from this run\n\n")
		for _, k := range sortedKeys(r.Extra) {
			p("- **%s**: %s\n", k, r.Extra[k])
		}
	}
	if len(r.Profiles) > 0 {
		p("\n## Profiles (pprof, taken from the controller during this run)\n\nFiles are in `bench/profiles/` (not committed); `go tool pprof -top bin/bg-gitops-image FILE` reproduces these tables.\n")
		for _, pr := range r.Profiles {
			p("\n### %s\n\n```\n%s\n```\n", pr.Name, strings.TrimSpace(pr.Top))
		}
	}
	if notes, err := os.ReadFile(filepath.Join(r.outputDir, "notes.md")); err == nil {
		p("\n%s", notes)
	}
	if len(r.Failures) > 0 {
		p("\n## Scenario errors in this run\n\n")
		for _, f := range r.Failures {
			p("- %s\n", f)
		}
	}
	return b.String()
}

// addQuiet computes median and spread without recording the figure.
func (r *report) addQuiet(f figure) *figure {
	r.Figures = nil
	return r.add(f)
}

func fmtNum(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.4g", v)
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

func shortPkg(p string) string { return strings.TrimPrefix(p, "bggitops.dev/bg-gitops/") }

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// comparison writes the table of bg-gitops next to Flux (measured in the
// same run, §6) and the targets, with the ratio of the medians.
func (r *report) comparison(p func(format string, a ...any)) {
	p("\n## bg-gitops next to Flux v2, and the targets\n\n")
	notRun := r.FluxNotRun
	if notRun == "" {
		notRun = "not measured in this run"
		for _, f := range r.Figures {
			if len(f.Compare) > 0 {
				notRun = ""
				break
			}
		}
	}
	if notRun != "" {
		p("Flux v2 column: %s. `make bench` builds source-controller and kustomize-controller (hack/tools/flux) and runs them in the same run unless FLUX=0.", notRun)
	} else {
		p("Flux v2 column: %s and %s, built from the Go module proxy (hack/tools/flux) and run in this same run, on the same control plane, against the same repositories, with one GitRepository + Kustomization pair per unit (§6 has every Flux figure and how it was taken). bg-gitops/Flux is the ratio of the medians: below 1, bg-gitops's figure is lower, which is better for every figure here.",
			fluxVersion(r, "source-controller"), fluxVersion(r, "kustomize-controller"))
	}
	p(" Rows: every figure with a Flux counterpart or a target.\n\n")
	p("| figure | bg-gitops median | spread | Flux v2 median | spread | bg-gitops/Flux | target | |\n|---|---|---|---|---|---|---|---|\n")
	paired := map[*figure]bool{}
	for _, f := range r.Figures {
		if len(f.Compare) > 0 {
			continue
		}
		var fx *figure
		for _, g := range r.Figures {
			if contains(g.Compare, f.ID) {
				fx = g
				break
			}
		}
		if fx == nil && f.Target == "" && !(notRun != "" && fluxShared[f.ID]) {
			continue
		}
		fluxMedian, fluxSpread, ratio := "–", "–", "–"
		switch {
		case fx != nil:
			paired[fx] = true
			fluxMedian, fluxSpread = fx.medianText(), fx.spreadText()
			if len(f.Samples) > 0 && len(fx.Samples) > 0 && fx.Median != 0 {
				ratio = fmtRatio(f.Median / fx.Median)
			}
		case notRun != "" && fluxShared[f.ID]:
			fluxMedian = notRun
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Name, f.medianText(), f.spreadText(), fluxMedian, fluxSpread, ratio, f.Target, f.status())
	}
	for _, fx := range r.Figures {
		if len(fx.Compare) > 0 && !paired[fx] {
			p("| %s | not run | – | %s | %s | – | | |\n", fx.Name, fx.medianText(), fx.spreadText())
		}
	}
	p("\nFor reference only (not measured here): issue 9 gave Flux v2 on the same workload and kind of machine as commit + annotation → applied 0.13–0.21 s (N=1 and N=50), creation → all Ready 5.4–6.2 s at N=50, peak RSS 103 MiB + 164–171 MiB (two processes), 824 API requests (about 15 per no-op reconcile, 8 of them status patches; 24 lease renewals) and 4.2 CPU-s per idle minute at N=50.\n")
}

func fluxVersion(r *report, name string) string {
	if v := r.Versions["flux "+name]; v != "" {
		return name + " " + v
	}
	return name
}

func fmtRatio(v float64) string {
	switch {
	case v < 0.1:
		return fmt.Sprintf("%.3f×", v)
	case v < 10:
		return fmt.Sprintf("%.2f×", v)
	default:
		return fmt.Sprintf("%.0f×", v)
	}
}
