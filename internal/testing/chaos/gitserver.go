/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitserver.go: runGitServer, the git server role: the bare repositories
// served over smart HTTP by `git http-backend`.

package chaos

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// runGitServer serves the bare repositories under --root over smart HTTP
// with the real `git http-backend`: the git server of beta, a process the
// nemesis stops and slows apart from Gitea, which owns the repositories.
func runGitServer(args []string) error {
	fs := flag.NewFlagSet(roleGitServer, flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	root := fs.String("root", "", "directory of the bare repositories")
	if err := fs.Parse(args); err != nil {
		return err
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return err
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Stderr: os.Stderr,
		Env: []string{"GIT_PROJECT_ROOT=" + *root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + os.Getenv("GIT_CONFIG_GLOBAL"), "HOME=" + os.Getenv("HOME")}}
	srv := &http.Server{Addr: *addr, Handler: backend, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
