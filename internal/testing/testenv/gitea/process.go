/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// process.go: proc, one `gitea web` process: startWeb starts it, stop
// signals its process group.

package gitea

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"bggitops.dev/bg-gitops/internal/spawn"
)

// stopTimeout is how long Gitea gets to exit after SIGTERM.
const stopTimeout = 10 * time.Second

// proc is one running `gitea web`, tracked by PID.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when Wait returned
	err  error         // Wait's result, valid after done
}

// env isolates Gitea from the developer's git and Gitea configuration.
func env(dir string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "GITEA_") || k == "HOME" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+dir+"/home", "GIT_CONFIG_GLOBAL="+gitConfigPath(dir),
		"GIT_CONFIG_NOSYSTEM=1", "GITEA_WORK_DIR="+dir)
}

func (s *Server) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"--config", s.config, "--work-path", s.dir}, args...)
	cmd := exec.CommandContext(ctx, s.binary, full...)
	cmd.Dir = s.dir
	cmd.Env = env(s.dir)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// run runs a short-lived gitea subcommand and returns its stdout.
func (s *Server) run(ctx context.Context, args ...string) (string, error) {
	cmd := s.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("gitea %s: %w: %s", args[0], err, tail(stderr.String()+stdout.String()))
	}
	return stdout.String(), nil
}

// startWeb starts `gitea web` in the background; its output goes to the
// log file and to w.
func (s *Server) startWeb(w io.Writer) (*proc, error) {
	// Not bound to a context: the server lives until Stop.
	cmd := s.command(context.Background(), "web")
	cmd.Stdout, cmd.Stderr = w, w
	// From the spawning thread: its parent-death signal must not fire when
	// some other goroutine's locked thread, which may have forked it, ends.
	if err := spawn.Start(cmd); err != nil {
		return nil, fmt.Errorf("start gitea web: %w", err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop sends SIGTERM to the process group, then SIGKILL after stopTimeout,
// and waits until the process has been reaped.
func (p *proc) stop() error {
	pid := p.cmd.Process.Pid
	_ = killGroup(pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = killGroup(pid, syscall.SIGKILL)
		<-p.done
	}
	// Stragglers (git children) in the group die with it.
	_ = killGroup(pid, syscall.SIGKILL)
	return nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func killGroup(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return syscall.Kill(pid, sig)
	}
	return nil
}

func tail(s string) string {
	const max = 2000
	s = strings.TrimSpace(s)
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}
