/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// process.go: Spec and Process: a child process in its own process group,
// started again on demand, signalled, paused and stopped.

package process

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"bggitops.dev/bg-gitops/internal/spawn"
)

// Spec is what to run. The same Spec is used again by Restart.
type Spec struct {
	// Name identifies the process in errors and logs.
	Name string
	// Path and Args are the command line (Args without argv[0]).
	Path string
	Args []string
	// Env is the whole environment; nil inherits this process's.
	Env []string
	// Dir is the working directory; empty: this process's.
	Dir string
	// Log receives stdout and stderr, appended across restarts.
	Log string
}

// Process is one supervised child process, started again on demand.
type Process struct {
	spec Spec

	mu   sync.Mutex
	run  *run
	runs int
}

// run is one start of the process.
type run struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once Wait returned
	err  error         // Wait's result, valid after done
}

// ErrRunning is returned by Restart while the process runs.
var ErrRunning = errors.New("process is running")

// Start starts spec.
func Start(spec Spec) (*Process, error) {
	p := &Process{spec: spec}
	return p, p.start()
}

// Restart starts the process again with the same Spec after it exited.
func (p *Process) Restart() error {
	if p.Running() {
		return fmt.Errorf("%s: %w", p.spec.Name, ErrRunning)
	}
	return p.start()
}

func (p *Process) start() error {
	logFile, err := os.OpenFile(p.spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s: log: %w", p.spec.Name, err)
	}
	cmd := exec.Command(p.spec.Path, p.spec.Args...)
	cmd.Env, cmd.Dir = p.spec.Env, p.spec.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := spawn.Start(cmd); err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w", p.spec.Name, err)
	}
	remember(cmd.Process.Pid)
	r := &run{cmd: cmd, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		logFile.Close()
		close(r.done)
	}()
	p.mu.Lock()
	p.run, p.runs = r, p.runs+1
	p.mu.Unlock()
	return nil
}

func (p *Process) current() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run
}

// Name is Spec.Name.
func (p *Process) Name() string { return p.spec.Name }

// Log is the path of the file that receives its output.
func (p *Process) Log() string { return p.spec.Log }

// PID is the process id of the current run (0 before the first start).
func (p *Process) PID() int {
	if r := p.current(); r != nil {
		return r.cmd.Process.Pid
	}
	return 0
}

// Starts counts how often the process was started.
func (p *Process) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs
}

// Running reports whether the current run has not exited.
func (p *Process) Running() bool {
	r := p.current()
	if r == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// Done is closed when the current run exits.
func (p *Process) Done() <-chan struct{} {
	if r := p.current(); r != nil {
		return r.done
	}
	closed := make(chan struct{})
	close(closed)
	return closed
}

// ExitErr is how the last run ended (nil while it runs or after exit 0).
func (p *Process) ExitErr() error {
	r := p.current()
	if r == nil || p.Running() {
		return nil
	}
	return r.err
}

// Signal sends sig to the process group of the current run.
func (p *Process) Signal(sig syscall.Signal) error {
	r := p.current()
	if r == nil || !p.Running() {
		return nil
	}
	return signalGroup(r.cmd.Process.Pid, sig)
}

// Pause stops the whole process group (SIGSTOP); Resume continues it.
func (p *Process) Pause() error  { return p.Signal(syscall.SIGSTOP) }
func (p *Process) Resume() error { return p.Signal(syscall.SIGCONT) }

// Kill sends SIGKILL to the process group and waits for the process.
func (p *Process) Kill() error {
	r := p.current()
	if r == nil {
		return nil
	}
	err := signalGroup(r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
	return err
}

// Stop sends SIGTERM (and SIGCONT, in case it is paused), waits up to
// timeout, then kills the group. Stragglers of the group die with it.
func (p *Process) Stop(timeout time.Duration) error {
	r := p.current()
	if r == nil {
		return nil
	}
	pid := r.cmd.Process.Pid
	_ = signalGroup(pid, syscall.SIGTERM)
	_ = signalGroup(pid, syscall.SIGCONT)
	select {
	case <-r.done:
	case <-time.After(timeout):
	}
	err := signalGroup(pid, syscall.SIGKILL)
	<-r.done
	return err
}

// signalGroup signals the group led by pid; a group already gone is no
// error.
func signalGroup(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
