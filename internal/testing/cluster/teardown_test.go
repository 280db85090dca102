/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// teardown_test.go: teardown.sh leaves alone what others put on the
// machine while a cluster ran.

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// A network namespace another program pins in /run/netns while a cluster
// runs is not the cluster's: teardown.sh removes containerd's (cni-*)
// only, and keeps /run/netns while it holds another's.
func TestTeardownKeepsANetworkNamespaceItDidNotCreate(t *testing.T) {
	dir, _ := lockedSnapshot(t)
	_, statErr := os.Stat("/run/netns")
	hadRunNetns := statErr == nil
	ns := filepath.Join("/run/netns", fmt.Sprintf("bg-gitops-test-foreign-%d", os.Getpid()))
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ns, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = exec.Command("umount", ns).Run()
		_ = os.Remove(ns)
		if !hadRunNetns {
			_ = os.Remove("/run/netns")
		}
	}()
	if out, err := exec.Command("unshare", "--net="+ns, "true").CombinedOutput(); err != nil {
		t.Fatalf("unshare: %v: %s", err, out)
	}
	script := filepath.Join(dir, "teardown.sh")
	if err := os.WriteFile(script, teardownScript, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "/bin/bash", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("teardown.sh: %v: %s", err, out)
	}
	t.Logf("teardown.sh: %s", out)
	if _, err := os.Stat(ns); err != nil {
		t.Errorf("teardown.sh removed %s, which another program made: %v", ns, err)
	}
}

// Without ip (iproute2, which minimal Debian images lack, and none of the
// other packages pulls in) Start refuses at once, naming it, and a test
// skips outside CI and fails under it; it does not fail halfway through.
func TestStartNamesAMissingIPCommand(t *testing.T) {
	bin := binDir(t)
	testenv.Require(t, prerequisites(bin))
	path := t.TempDir()
	for _, cmd := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables-save", "ip6tables-restore", "sysctl"} {
		p, err := exec.LookPath(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(path, cmd)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", path)
	err := prerequisites(bin)
	if !errors.Is(err, testenv.ErrBinaryMissing) || !strings.Contains(err.Error(), "ip not found") {
		t.Errorf("prerequisites without ip: %v", err)
	}
}

// An iptables rule another program adds while a cluster runs is kept by
// teardown.sh, which removes only what the cluster adds: its rules
// (comment bg-gitops-test-), the KUBE-* chains and the jumps to them.
func TestTeardownKeepsAnIPTablesRuleItDidNotAdd(t *testing.T) {
	dir, before := lockedSnapshot(t)
	foreign := []string{"INPUT", "-s", "198.51.100.7/32", "-m", "comment", "--comment", fmt.Sprintf("bg-gitops-foreign-%d", os.Getpid()), "-j", "DROP"}
	iptables := func(args ...string) error {
		out, err := exec.Command("iptables", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	defer func() { _ = iptables(append([]string{"-D"}, foreign...)...) }()
	for _, args := range [][]string{
		{"-N", "KUBE-FIREWALL"}, {"-A", "INPUT", "-j", "KUBE-FIREWALL"},
		{"-t", "nat", "-I", "PREROUTING", "-i", Bridge, "-d", "10.244.0.1/32", "-p", "tcp", "--dport", "9",
			"-m", "comment", "--comment", "bg-gitops-test-host", "-j", "DNAT", "--to-destination", "127.0.0.1:9"},
		append([]string{"-A"}, foreign...),
	} {
		if err := iptables(args...); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "teardown.sh")
	if err := os.WriteFile(script, teardownScript, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "/bin/bash", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("teardown.sh: %v: %s", err, out)
	}
	if err := iptables(append([]string{"-C"}, foreign...)...); err != nil {
		t.Errorf("teardown.sh removed a rule another program added: %v", err)
	}
	if err := iptables(append([]string{"-D"}, foreign...)...); err != nil {
		t.Fatal(err)
	}
	if left := before.Leftovers(dir, Bridge); len(left) > 0 {
		t.Errorf("teardown.sh left the cluster's rules:\n%s", strings.Join(left, "\n"))
	}
}

// lockedSnapshot holds the cluster lock until t ends (teardown.sh rewrites
// iptables: no cluster may run meanwhile) and records the machine in a
// directory of t's, as Start does before a cluster starts.
func lockedSnapshot(t *testing.T) (dir string, before *snapshot) {
	t.Helper()
	testenv.Require(t, prerequisites(binDir(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	dir = t.TempDir()
	if before, err = takeSnapshot(dir, Bridge, ""); err != nil {
		t.Fatal(err)
	}
	return dir, before
}
