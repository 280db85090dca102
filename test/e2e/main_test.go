/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package e2e runs the demo story and its failure cases end to end: a real
// kube-apiserver + etcd, a real Gitea delivering push webhooks and storing
// commit statuses, the Flink operator simulator and the bg-gitops
// controllers, all started by internal/devenv exactly as `bg-gitops dev`
// starts them. The tests assert the state of the world after each step.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/devenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

var (
	env        *devenv.Env
	story      *devenv.Story
	skipReason string
	// seedContent is the repository's content at the seed commit: a later
	// run of the story (go test -count=N) starts over from it.
	seedContent map[string]string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if err := missingBinaries(); err != nil {
		if !testenv.Skippable(err) {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		skipReason = err.Error()
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The timeline goes to stdout: go test shows it with -v or when the
	// package fails.
	var err error
	// The GitRepository polls hourly: within a step's timeout only the
	// push webhook can bring a commit to the cluster.
	env, err = devenv.Start(ctx, devenv.Options{Out: os.Stdout, GitInterval: time.Hour})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the local environment:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop:", err)
		}
	}()
	seedContent = map[string]string{}
	for _, f := range env.Files() {
		seedContent[f] = env.File(f)
	}
	return m.Run()
}

// missingBinaries says why the suite cannot run here (no `make tools`).
func missingBinaries() error {
	if _, err := testenv.BinDir(); err != nil {
		return err
	}
	_, err := gitea.LocateBinary("")
	return err
}

func setup(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip(skipReason)
	}
}
