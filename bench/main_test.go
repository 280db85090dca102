//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package bench holds the scenario benchmarks of `make bench`: a real
// kube-apiserver and etcd (internal/testing/testenv), real `git http-backend`
// servers, a real Gitea, and `bg-gitops controller` as a separate process.
// TestScenarios runs only when BGGITOPS_BENCH_OUT names the output
// directory (hack/bench.sh sets it); it reports figures and asserts none.
package bench

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// settings read from the environment (hack/bench.sh documents them).
type settings struct {
	out    string
	rounds int
	// bigRounds is the number of creation rounds at N=500, each of which
	// creates 500 GitRepositories.
	bigRounds int
	// qpsBigRounds and shardRounds are the rounds at N=500 of the what-if
	// run with the client-side limiter and of the shards.
	qpsBigRounds, shardRounds int
	scales                    []int
	idle                      time.Duration
	shardN                    int
	phases                    map[string]bool

	// fluxBigRounds are Flux's creation rounds at N=500.
	fluxBigRounds int
	// fluxNotRun says why Flux's controllers are not run ("" when they
	// are): FLUX=0, or BENCH_PHASES without flux.
	fluxNotRun string
	// gitea serves the repositories from a real Gitea's own smart HTTP
	// (BENCH_GIT=gitea) instead of `git http-backend`.
	gitea bool
}

func loadSettings() settings {
	s := settings{out: os.Getenv("BGGITOPS_BENCH_OUT"), rounds: 5, bigRounds: 5, qpsBigRounds: 3, shardRounds: 3, scales: []int{1, 50, 500},
		idle: time.Minute, shardN: 500, phases: map[string]bool{}}
	if v, err := strconv.Atoi(os.Getenv("BENCH_ROUNDS")); err == nil && v > 0 {
		s.rounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_BIG_ROUNDS")); err == nil && v > 0 {
		s.bigRounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_QPS_BIG_ROUNDS")); err == nil && v > 0 {
		s.qpsBigRounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_SHARD_ROUNDS")); err == nil && v > 0 {
		s.shardRounds = v
	}
	if v := os.Getenv("BENCH_SCALES"); v != "" {
		s.scales = nil
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				s.scales = append(s.scales, n)
			}
		}
	}
	// A Flux round at N=500 takes 2–4 minutes on 2 cores (create, then
	// delete with pruning): 3 by default, as the other N=500 extra runs.
	s.fluxBigRounds = min(3, s.bigRounds)
	if v, err := strconv.Atoi(os.Getenv("BENCH_FLUX_BIG_ROUNDS")); err == nil && v > 0 {
		s.fluxBigRounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_SHARD_N")); err == nil && v > 0 {
		s.shardN = v
	}
	if d, err := time.ParseDuration(os.Getenv("BENCH_IDLE")); err == nil {
		s.idle = d
	}
	s.gitea = os.Getenv("BENCH_GIT") == "gitea"
	phases := os.Getenv("BENCH_PHASES")
	if phases == "" {
		phases = "scale,flux,leader-off,qps,shards,takeover,rollout,monorepo"
	}
	for _, p := range strings.Split(phases, ",") {
		s.phases[strings.TrimSpace(p)] = true
	}
	switch {
	case os.Getenv("FLUX") == "0":
		s.fluxNotRun = "not run (FLUX=0)"
	case !s.phases["flux"] && !s.phases["monorepo"]:
		s.fluxNotRun = "not run (BENCH_PHASES without flux or monorepo)"
	}
	return s
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

// TestRenderReport rewrites results.md from results.json and notes.md
// (`hack/bench.sh render`).
func TestRenderReport(t *testing.T) {
	dir := os.Getenv("BGGITOPS_BENCH_RENDER")
	if dir == "" {
		t.Skip("set BGGITOPS_BENCH_RENDER to the directory of results.json")
	}
	if err := renderAgain(dir); err != nil {
		t.Fatal(err)
	}
}
