/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The CLI run as a separate process by the tests (the controller, dev): start,
// stop, wait, read its output and metrics.

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliMainEnv makes the test binary run the bg-gitops command line with its
// arguments instead of the tests: `bg-gitops controller` and `bg-gitops dev`
// run as real processes (their own signal handler, their own controller
// names and metrics registry, a PID to stop) built from the code under test,
// without a `go build` of their own.
const cliMainEnv = "BGGITOPS_TEST_RUN_CLI"

func init() {
	if os.Getenv(cliMainEnv) == "1" {
		os.Exit(Execute())
	}
}

// cliProcess is one `bg-gitops ...` process.
type cliProcess struct {
	name       string
	cmd        *exec.Cmd
	stdout     string // file
	stderr     string // file
	done       chan struct{}
	exitCode   int
	stopSignal bool
}

// startProcess runs the bg-gitops command line with args as a process of
// its own; the test's cleanup stops it (SIGTERM, then SIGKILL after 60s).
func startProcess(t *testing.T, name string, args ...string) *cliProcess {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &cliProcess{name: name, stdout: filepath.Join(dir, "stdout"), stderr: filepath.Join(dir, "stderr"),
		done: make(chan struct{})}
	out, err := os.Create(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	errOut, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(exe, args...)
	p.cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	p.cmd.Stdout, p.cmd.Stderr = out, errOut
	stopWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		out.Close()
		errOut.Close()
		p.exitCode = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.exitCode = ee.ExitCode()
		} else if err != nil {
			p.exitCode = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.stop(syscall.SIGTERM, 60*time.Second) != nil {
			t.Errorf("%s did not stop within 60s; killed", name)
		}
		if t.Failed() {
			t.Logf("%s stdout:\n%s\n%s stderr (tail):\n%s", name, p.output(), name, tail(p.errors(), 60))
		}
	})
	return p
}

func (p *cliProcess) output() string { b, _ := os.ReadFile(p.stdout); return string(b) }
func (p *cliProcess) errors() string { b, _ := os.ReadFile(p.stderr); return string(b) }

func (p *cliProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig by PID and waits for the process to exit; after timeout it
// kills it and returns an error. Stopping a process that exited is a no-op.
func (p *cliProcess) stop(sig syscall.Signal, timeout time.Duration) error {
	if p.exited() {
		return nil
	}
	p.stopSignal = true
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s ignored %v for %s", p.name, sig, timeout)
	}
}

// wait waits for the process to exit by itself and returns its exit code.
func (p *cliProcess) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.exitCode
	case <-time.After(timeout):
		t.Fatalf("%s still running after %s", p.name, timeout)
		return 0
	}
}

// until polls cond every 100ms until it holds; it fails the test when the
// process exits first or timeout passes.
func (p *cliProcess) until(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return
		}
		if p.exited() {
			t.Fatalf("%s exited with code %d while waiting for %s:\n%s", p.name, p.exitCode, what, tail(p.errors(), 40))
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// freeAddress is a 127.0.0.1 address with a port nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var probeClient = &http.Client{Timeout: 5 * time.Second}

// httpGet returns the status code and body of GET url; code 0 when the
// request failed (nothing listening).
func httpGet(url string) (int, string) {
	resp, err := probeClient.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metric sums the samples of a Prometheus text exposition whose name is
// name and whose labels include every label="value" in labels; found is
// false when no sample matched.
func metric(exposition, name string, labels ...string) (sum float64, found bool) {
	sc := bufio.NewScanner(strings.NewReader(exposition))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(series, l) {
				match = false
			}
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}
