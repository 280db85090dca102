/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command mutate is the mutation test of one Go package (make mutate). It
// makes one small change (a mutant) at a time to the package's non-test
// files — a condition negated or moved across its boundary, && swapped
// with ||, a ! dropped, + swapped with -, a statement removed, a returned
// value replaced by a constant — runs the package's tests on each through
// `go test -overlay` (the working tree is never touched), and reports the
// score: the share of mutants the tests notice. A surviving mutant is a
// behaviour no test pins down, or an equivalent change that no test can
// tell apart from the original; the notes file (docs/mutation.md) names
// the equivalent ones, and the report marks the survivors it does not.
//
//	go run ./hack/mutate [-jobs 2] [-threshold 90] [-run regexp] [-list] ./internal/bluegreen
//
// It exits 1 when the score is below the threshold.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Outcomes of a mutant.
const (
	killed    = "killed"
	timedOut  = "timed out" // counted as killed
	survived  = "survived"
	notViable = "not viable" // does not compile; not counted
)

type result struct {
	m       *mutant
	outcome string
	by      string // the first failing test, for -v
	took    time.Duration
	// alone: the tests matching -alone kill it by themselves too.
	alone bool
}

type options struct {
	pkg       string
	jobs      int
	threshold float64
	short     bool
	run       *regexp.Regexp
	timeout   time.Duration
	notes     string
	verbose   bool
	// alone, when set, names tests (the explorer and the walks) whose
	// score on their own is reported beside the whole suite's.
	alone *regexp.Regexp
}

func main() {
	var o options
	var run string
	list := flag.Bool("list", false, "list the mutants and exit")
	flag.IntVar(&o.jobs, "jobs", 2, "mutants tested at once")
	flag.Float64Var(&o.threshold, "threshold", 90, "exit 1 when the score (percent) is below")
	flag.BoolVar(&o.short, "short", true, "run the tests with -short")
	flag.StringVar(&run, "run", "", "test only the mutants whose `file:line:col kind description` matches this regexp")
	flag.DurationVar(&o.timeout, "timeout", 0, "test timeout of one mutant (default 10× the unmutated run, at least 1m)")
	flag.StringVar(&o.notes, "notes", "", "a file that explains equivalent mutants by key (\"file func: mutation\")")
	flag.BoolVar(&o.verbose, "v", false, "print every mutant's outcome")
	alone := flag.String("alone", "", "also report the score of the tests matching this regexp on their own (a killed mutant is tested again with only them)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mutate [flags] ./path/to/package\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	o.pkg = flag.Arg(0)
	if *alone != "" {
		re, err := regexp.Compile(*alone)
		if err != nil {
			fatalf("-alone: %v", err)
		}
		o.alone = re
	}
	if run != "" {
		re, err := regexp.Compile(run)
		if err != nil {
			fatalf("-run: %v", err)
		}
		o.run = re
	}
	ms, srcs, err := generate(o.pkg)
	if err != nil {
		fatalf("%v", err)
	}
	if o.run != nil {
		var picked []*mutant
		for _, m := range ms {
			if o.run.MatchString(m.Where() + " " + m.Kind + " " + m.What) {
				picked = append(picked, m)
			}
		}
		ms = picked
	}
	if *list {
		for _, m := range ms {
			fmt.Printf("%-24s %-20s %-18s %s\n", m.Where(), m.Func, m.Kind, m.What)
		}
		fmt.Printf("%d mutants\n", len(ms))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := mutate(ctx, o, ms, srcs)
	if err != nil {
		fatalf("%v", err)
	}
	if !ok {
		os.Exit(1)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mutate: "+format+"\n", args...)
	os.Exit(2)
}

func mutate(ctx context.Context, o options, ms []*mutant, srcs map[string][]byte) (bool, error) {
	dir, err := filepath.Abs(o.pkg)
	if err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)

	fmt.Printf("mutation testing of %s: %d mutants in %d files, %d at a time\n", o.pkg, len(ms), len(srcs), o.jobs)
	start := time.Now()
	out, err := goTest(ctx, o, "", 10*time.Minute, "")
	if err != nil {
		return false, fmt.Errorf("the unmutated tests fail; fix them first:\n%s", out)
	}
	base := time.Since(start)
	if o.timeout == 0 {
		o.timeout = max(10*base, time.Minute)
	}
	fmt.Printf("unmutated tests pass in %s; a mutant's tests time out after %s\n", base.Round(100*time.Millisecond), o.timeout)

	todo := make(chan *mutant)
	done := make(chan result)
	var wg sync.WaitGroup
	for w := 0; w < max(o.jobs, 1); w++ {
		wd := filepath.Join(tmp, fmt.Sprint(w))
		if err := os.MkdirAll(wd, 0o755); err != nil {
			return false, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range todo {
				done <- testMutant(ctx, o, dir, wd, m, srcs[m.File])
			}
		}()
	}
	go func() {
		defer close(todo)
		for _, m := range ms {
			select {
			case todo <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(done) }()

	var results []result
	for r := range done {
		results = append(results, r)
		if o.verbose {
			fmt.Printf("[%3d/%d] %-10s %-24s %-18s %s %s\n", len(results), len(ms), r.outcome, r.m.Where(), r.m.Kind, r.m.What, r.by)
		} else if len(results)%25 == 0 {
			fmt.Fprintf(os.Stderr, "  %d/%d mutants tested (%s)\n", len(results), len(ms), time.Since(start).Round(time.Second))
		}
	}
	if ctx.Err() != nil {
		return false, errors.New("interrupted")
	}
	return report(o, results, time.Since(start)), nil
}

// testMutant writes the mutated file into wd and runs the package's tests
// with it in place of the original.
func testMutant(ctx context.Context, o options, dir, wd string, m *mutant, src []byte) result {
	file := filepath.Join(wd, m.File)
	if err := os.WriteFile(file, m.apply(src), 0o644); err != nil {
		return result{m: m, outcome: notViable, by: err.Error()}
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(dir, m.File): file}})
	ov := filepath.Join(wd, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return result{m: m, outcome: notViable, by: err.Error()}
	}
	start := time.Now()
	out, err := goTest(ctx, o, ov, o.timeout, "")
	r := result{m: m, took: time.Since(start)}
	switch {
	case err == nil:
		r.outcome = survived
	case errors.Is(err, context.DeadlineExceeded) || bytes.Contains(out, []byte("panic: test timed out")):
		r.outcome = timedOut
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		r.outcome = notViable
	default:
		r.outcome = killed
		if i := bytes.Index(out, []byte("--- FAIL: ")); i >= 0 {
			r.by = strings.Fields(string(out[i+len("--- FAIL: "):]))[0]
		}
	}
	if o.alone != nil && (r.outcome == killed || r.outcome == timedOut) {
		_, err := goTest(ctx, o, ov, o.timeout, o.alone.String())
		r.alone = err != nil
	}
	return r
}

// goTest runs the package's tests once (only those matching run, if not
// empty), with the overlay if not empty.
func goTest(ctx context.Context, o options, overlay string, timeout time.Duration, run string) ([]byte, error) {
	args := []string{"test", "-count=1", "-failfast", "-vet=off", "-p=1", "-timeout=" + timeout.String()}
	if run != "" {
		args = append(args, "-run", run)
	}
	if o.short {
		args = append(args, "-short")
	}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	args = append(args, o.pkg)
	// A backstop for a hung build; the test binary stops itself at -timeout.
	ctx, cancel := context.WithTimeout(ctx, timeout+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, err
}

// report prints the score and the survivors, and says whether the score
// reaches the threshold.
func report(o options, results []result, took time.Duration) bool {
	count := map[string]int{}
	var alive []result
	for _, r := range results {
		count[r.outcome]++
		if r.outcome == survived {
			alive = append(alive, r)
		}
	}
	sort.Slice(alive, func(i, j int) bool { return alive[i].m.ID < alive[j].m.ID })
	notes := ""
	if o.notes != "" {
		b, err := os.ReadFile(o.notes)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mutate: notes: %v\n", err)
		}
		notes = string(b)
	}
	dead := count[killed] + count[timedOut]
	viable := dead + count[survived]
	score := 100.0
	if viable > 0 {
		score = 100 * float64(dead) / float64(viable)
	}
	fmt.Printf("\n%s: %d mutants tested in %s\n", o.pkg, len(results), took.Round(time.Second))
	fmt.Printf("  killed      %4d (%d of them by a timeout)\n", dead, count[timedOut])
	fmt.Printf("  survived    %4d\n", count[survived])
	fmt.Printf("  not viable  %4d (do not compile; not counted)\n", count[notViable])
	fmt.Printf("  score       %.1f%% (%d/%d killed), threshold %.0f%%\n", score, dead, viable, o.threshold)
	if o.alone != nil {
		n := 0
		for _, r := range results {
			if r.alone {
				n++
			}
		}
		fmt.Printf("  alone       %.1f%% (%d/%d killed by the tests matching %s on their own)\n",
			100*float64(n)/float64(max(viable, 1)), n, viable, o.alone)
	}
	if len(alive) > 0 {
		fmt.Printf("\nsurvivors:\n")
		unexplained := 0
		for _, r := range alive {
			mark := ""
			if o.notes != "" {
				if strings.Contains(notes, r.m.Key()) {
					mark = "  [equivalent: " + o.notes + "]"
				} else {
					mark = "  [NOT EXPLAINED]"
					unexplained++
				}
			}
			fmt.Printf("  %-24s %-18s %-20s %s%s\n", r.m.Where(), r.m.Func, r.m.Kind, r.m.What, mark)
		}
		if o.notes != "" {
			fmt.Printf("%d of %d survivors are explained in %s (by key: \"<file> <func>: <mutation>\")\n",
				len(alive)-unexplained, len(alive), o.notes)
		}
	}
	if score < o.threshold {
		fmt.Printf("\nFAIL: score %.1f%% is below the threshold of %.0f%%\n", score, o.threshold)
		return false
	}
	return true
}
