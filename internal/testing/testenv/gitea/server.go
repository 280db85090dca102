/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// server.go: Server and Start: a fresh Gitea served from its data
// directory, with Stop, Restart, StopProcess and Serve.

package gitea

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// Options configure Start. The zero value works when bin/gitea exists.
type Options struct {
	// Binary is the gitea executable; default $BGGITOPS_BIN_DIR/gitea or
	// <repository root>/bin/gitea.
	Binary string
	// StaticRoot is Gitea's source directory (locale files); default the
	// content of <Binary>.static-root.
	StaticRoot string
	// Dir holds app.ini, the database, repositories and logs. Empty: a new
	// temporary directory, removed by Stop.
	Dir string
	// Port on 127.0.0.1; 0 picks a free one.
	Port int
	// Stdout, when set, also receives Gitea's log (always in Dir/gitea.log).
	Stdout io.Writer
	// StartTimeout bounds each wait for the API; default 60s.
	StartTimeout time.Duration
}

// Server is a running Gitea.
type Server struct {
	// URL is the root URL, http://127.0.0.1:<port> (no trailing slash).
	URL                      string
	AdminUser, AdminPassword string
	// Token is an admin API token with all scopes.
	Token string

	binary, dir, config string
	ownsDir             bool
	logPath             string
	stdout              io.Writer
	timeout             time.Duration
	http                *http.Client

	mu   sync.Mutex
	proc *proc
}

// Start prepares a fresh Gitea in o.Dir and serves it; it returns once the
// API answers and the admin token exists.
func Start(ctx context.Context, o Options) (*Server, error) {
	s, err := newServer(o)
	if err != nil {
		return nil, err
	}
	if err := s.bootstrap(ctx, o.StaticRoot, o.Port); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func newServer(o Options) (*Server, error) {
	bin, err := LocateBinary(o.Binary)
	if err != nil {
		return nil, err
	}
	s := &Server{binary: bin, dir: o.Dir, stdout: o.Stdout, timeout: o.StartTimeout,
		AdminUser: "bggitops", AdminPassword: "bggitops-" + randomHex(16),
		http: &http.Client{Timeout: 30 * time.Second}}
	if s.timeout == 0 {
		s.timeout = 60 * time.Second
	}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "bggitops-gitea-"); err != nil {
			return nil, err
		}
		s.ownsDir = true
	}
	s.dir, err = filepath.Abs(s.dir)
	s.logPath = filepath.Join(s.dir, "gitea.log")
	return s, err
}

func (s *Server) bootstrap(ctx context.Context, static string, port int) error {
	var err error
	if static == "" {
		if static, err = staticRoot(s.binary); err != nil {
			return err
		}
	}
	if port == 0 {
		if port, err = testenv.FreePort(); err != nil {
			return err
		}
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	if s.config, err = writeConfig(s.dir, static, port); err != nil {
		return fmt.Errorf("write gitea config: %w", err)
	}
	if _, err := s.run(ctx, "migrate"); err != nil {
		return err
	}
	if _, err := s.run(ctx, "admin", "user", "create", "--admin", "--username", s.AdminUser,
		"--password", s.AdminPassword, "--email", s.AdminUser+"@example.invalid",
		"--must-change-password=false"); err != nil {
		return err
	}
	if err := s.serve(ctx); err != nil {
		return err
	}
	s.Token, err = s.createToken(ctx)
	return err
}

// serve starts `gitea web` and waits until /api/v1/version answers.
func (s *Server) serve(ctx context.Context) error {
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	var w io.Writer = logFile
	if s.stdout != nil {
		w = io.MultiWriter(logFile, s.stdout)
	}
	p, err := s.startWeb(w)
	if err != nil {
		logFile.Close()
		return err
	}
	go func() { <-p.done; logFile.Close() }()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	return s.waitReady(ctx, p)
}

func (s *Server) waitReady(ctx context.Context, p *proc) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	for {
		if p.exited() {
			return fmt.Errorf("gitea web exited: %v: %s", p.err, s.logTail())
		}
		if s.versionAnswers(ctx) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gitea not ready at %s: %w: %s", s.URL, ctx.Err(), s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) versionAnswers(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/version", nil)
	if err != nil {
		return false
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (s *Server) logTail() string {
	data, _ := os.ReadFile(s.logPath)
	return tail(string(data))
}

// Stop stops Gitea and waits until it is gone; it removes the data
// directory when Start created it. Calling it again does nothing.
func (s *Server) Stop() error {
	err := s.stopProc()
	if s.ownsDir {
		s.ownsDir = false
		if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
			err = rmErr
		}
	}
	return err
}

func (s *Server) stopProc() error {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.stop()
}

// Restart stops Gitea and serves the same data on the same port again,
// for tests of forge outages.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.stopProc(); err != nil {
		return err
	}
	return s.serve(ctx)
}

// StopProcess stops Gitea but keeps its data, so Serve can bring it back
// later: an outage of arbitrary length.
func (s *Server) StopProcess() error { return s.stopProc() }

// Serve starts Gitea again after StopProcess.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	running := s.proc != nil
	s.mu.Unlock()
	if running {
		return errors.New("gitea is already running")
	}
	return s.serve(ctx)
}

// PID is the process id of the running `gitea web`, 0 when stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}
