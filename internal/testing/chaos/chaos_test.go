/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package chaos

import (
	"bytes"
	"os"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/cli"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// TestMain lets the test binary be the soak's processes too (the
// simulator, the git server, bg-gitops itself), re-executed with RoleEnv.
func TestMain(m *testing.M) {
	if code, ok := RunRole(cli.Execute); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// shortSeed is the seed of the variant in make test. Its schedule holds
// every kind of commit and most kinds of fault; change it only for one
// that does too.
const shortSeed = 20310288

// TestShortSoak is the 3-5 minute variant of make chaos: the whole system
// as processes under ShortPace faults for 150 s with a fixed seed; no
// violation, no process left, and the system at rest at the end.
func TestShortSoak(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	begin := time.Now()
	rep, err := Run(t.Context(), Options{Duration: 150 * time.Second, Seed: shortSeed, Pace: ShortPace,
		SettleTimeout: 5 * time.Minute, ReadyTimeout: 3 * time.Minute})
	var md bytes.Buffer
	_ = rep.WriteMarkdown(&md, "make test: the short chaos soak", "")
	t.Logf("took %s\n%s", time.Since(begin).Round(time.Second), md.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, v := range rep.Violations {
		t.Errorf("violation: %s: %s: %s", v.Invariant, v.Subject, v.Detail)
	}
	if len(rep.Violations) > 0 || len(rep.Leaks) > 0 || !rep.Settled {
		t.Fatalf("%d violations, %d process groups left, at rest %t %s(logs in %s)", len(rep.Violations), len(rep.Leaks), rep.Settled, rep.Unrest, rep.Dir)
	}
}
