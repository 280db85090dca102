/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command chaos is `make chaos`: the fault soak of internal/testing/chaos, with
// the figures written to a Markdown report (chaos/results.md). It exits 1
// when the run found a violation, left a process behind or ended early.
//
// The same executable runs the soak's own processes (the Flink operator
// simulator, the git server), re-executed with chaos.RoleEnv set.
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"bggitops.dev/bg-gitops/internal/cli"
	"bggitops.dev/bg-gitops/internal/testing/chaos"
)

func main() {
	if code, ok := chaos.RunRole(cli.Execute); ok {
		os.Exit(code)
	}
	os.Exit(run())
}

func run() int {
	duration := flag.Duration("duration", 60*time.Minute, "length of the fault phase (pushes and faults)")
	seedFlag := flag.String("seed", "", "seed of the schedule; empty: random (printed)")
	out := flag.String("out", "chaos/results.md", "the Markdown report")
	bgGitops := flag.String("bg-gitops", "", "bg-gitops binary for the controller replicas; empty: this executable's copy of it")
	short := flag.Bool("short", false, "the dense pace of the variant in make test")
	keep := flag.Bool("keep", false, "keep the run directory (logs of every process) even without a violation")
	flag.Parse()
	seed, err := parseSeed(*seedFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: -seed:", err)
		return 2
	}
	fmt.Printf("chaos: seed %d, duration %s (make chaos DURATION=%s SEED=%d repeats the schedule)\n", seed, *duration, *duration, seed)
	dieWithParent()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	pace := chaos.SoakPace
	if *short {
		pace = chaos.ShortPace
	}
	rep, runErr := chaos.Run(ctx, chaos.Options{Duration: *duration, Seed: seed, Pace: pace, Out: os.Stdout,
		BGGitops: *bgGitops, KeepDir: *keep})
	if err := writeReport(*out, rep); err != nil {
		fmt.Fprintln(os.Stderr, "error: write report:", err)
		return 2
	}
	fmt.Printf("chaos: %d violations, %d lost and %d duplicated commit statuses, %d process groups left; report %s\n",
		len(rep.Violations), rep.Lost, rep.Duplicated, len(rep.Leaks), *out)
	if rep.Dir != "" {
		fmt.Printf("chaos: logs of every process in %s\n", rep.Dir)
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "error:", runErr)
		return 1
	}
	if len(rep.Violations) > 0 || len(rep.Leaks) > 0 {
		return 1
	}
	return 0
}

func parseSeed(s string) (uint64, error) {
	if s != "" {
		return strconv.ParseUint(s, 10, 64)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	// Short enough to type back.
	return binary.LittleEndian.Uint64(b[:]) % 1_000_000_000, nil
}

func writeReport(path string, rep *chaos.Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return rep.WriteMarkdown(f, "make chaos: results", codeVersion())
}

// codeVersion names the commit the run built, and whether the working tree
// differed from it.
func codeVersion() string {
	head, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	v := "`" + strings.TrimSpace(string(head)) + "`"
	if dirty, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(dirty) > 0 {
		v += fmt.Sprintf(" with %d files changed and not committed", strings.Count(string(dirty), "\n"))
	}
	return v
}
