/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package chaos

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/cli"
	"bggitops.dev/bg-gitops/internal/testenv"
	"bggitops.dev/bg-gitops/internal/testenv/gitea"
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
const shortSeed = 20260922

// knownViolations are violations the soak found that are not fixed yet,
// each with the regression test that reproduces it (build tag
// chaos_regression). The short variant reports them but does not fail on
// them; any other violation fails it. Remove an entry with its fix.
var knownViolations = []struct {
	matches func(Violation) bool
	test    string
}{
	{
		// A commit whose sync pending reached the forge and whose success
		// did not before a newer commit was attempted stays pending.
		matches: func(v Violation) bool {
			return v.Invariant == invStatusNotLost && strings.HasPrefix(v.Detail, "bg-gitops/sync/") && strings.Contains(v.Detail, ", an earlier commit (")
		},
		test: "TestSupersededSyncVerdictIsPosted",
	},
	{
		// A revision that went live, whose job then failed while it stayed
		// the target, gets failure once its record left
		// status.commitStatuses (the newest 8).
		matches: func(v Violation) bool {
			return v.Invariant == invStatusOnce && strings.Contains(v.Detail, ": failure ") && strings.Contains(v.Detail, ") after success ")
		},
		test: "TestLiveRevisionKeepsItsSuccess",
	},
}

func known(v Violation) (string, bool) {
	for _, k := range knownViolations {
		if k.matches(v) {
			return k.test, true
		}
	}
	return "", false
}

// TestShortSoak is the 3-5 minute variant of make chaos: the whole system
// as processes under ShortPace faults for 150 s with a fixed seed; no
// violation (but the known ones), no process left, and the system at rest
// at the end.
func TestShortSoak(t *testing.T) {
	_, err := testenv.BinDir()
	testenv.Require(t, err)
	_, err = gitea.LocateBinary("")
	testenv.Require(t, err)
	begin := time.Now()
	rep, err := Run(t.Context(), Options{Duration: 150 * time.Second, Seed: shortSeed, Pace: ShortPace,
		SettleTimeout: 3 * time.Minute, ReadyTimeout: 3 * time.Minute})
	var md bytes.Buffer
	_ = rep.WriteMarkdown(&md, "make test: the short chaos soak", "")
	t.Logf("took %s\n%s", time.Since(begin).Round(time.Second), md.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	unknown := 0
	for _, v := range rep.Violations {
		if test, ok := known(v); ok {
			t.Logf("known violation (not fixed yet; %s reproduces it): %s: %s", test, v.Subject, v.Detail)
			continue
		}
		unknown++
		t.Errorf("violation: %s: %s: %s", v.Invariant, v.Subject, v.Detail)
	}
	if unknown > 0 || len(rep.Leaks) > 0 || !rep.Settled {
		t.Fatalf("%d violations not known, %d process groups left, at rest %t (logs in %s)", unknown, len(rep.Leaks), rep.Settled, rep.Dir)
	}
}
