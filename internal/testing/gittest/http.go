/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// http.go: HTTPServer (ServeHTTP), which serves the bare repositories over
// smart HTTP with `git http-backend`, and HTTPOptions (TLS, credentials).

package gittest

import (
	"crypto/subtle"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// HTTPServer serves the bare repositories under a root directory over
// smart HTTP with the real `git http-backend`.
type HTTPServer struct {
	// URL is the server's base URL; repositories are at URL/<name>.git.
	URL string
	// CABundle is the PEM certificate to trust when serving TLS.
	CABundle []byte
	// Username and Password, or Token, are required when set.
	Username, Password, Token string

	lists, uploadPacks atomic.Int64
}

// Listings counts ref advertisements served (ls-remote and the first half
// of every fetch).
func (s *HTTPServer) Listings() int64 { return s.lists.Load() }

// UploadPacks counts POST git-upload-pack requests, i.e. fetches and clones.
func (s *HTTPServer) UploadPacks() int64 { return s.uploadPacks.Load() }

// HTTPOptions configure ServeHTTP.
type HTTPOptions struct {
	TLS                       bool
	Username, Password, Token string
	// Wrap, when set, wraps the git handler (a server that misbehaves).
	Wrap func(http.Handler) http.Handler
}

// ServeHTTP starts a smart-HTTP server for root on 127.0.0.1.
func ServeHTTP(tb testing.TB, root string, o HTTPOptions) *HTTPServer {
	tb.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		tb.Fatal(err)
	}
	s := &HTTPServer{Username: o.Username, Password: o.Password, Token: o.Token}
	backend := &cgi.Handler{
		Path:   gitPath,
		Args:   []string{"http-backend"},
		Env:    append(gitEnv(), "GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1"),
		Stderr: io.Discard, // "not a git repository" for a 404 test is noise
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		s.count(r)
		backend.ServeHTTP(w, r)
	})
	var hh http.Handler = h
	if o.Wrap != nil {
		hh = o.Wrap(h)
	}
	var srv *httptest.Server
	if o.TLS {
		srv = httptest.NewTLSServer(hh)
		s.CABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	} else {
		srv = httptest.NewServer(hh)
	}
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *HTTPServer) authorized(r *http.Request) bool {
	switch {
	case s.Token != "":
		return eq(r.Header.Get("Authorization"), "Bearer "+s.Token)
	case s.Username != "":
		u, p, ok := r.BasicAuth()
		return ok && eq(u, s.Username) && eq(p, s.Password)
	}
	return true
}

func (s *HTTPServer) count(r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/info/refs") && r.URL.Query().Get("service") == "git-upload-pack":
		s.lists.Add(1)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
		s.uploadPacks.Add(1)
	}
}

func eq(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// gitEnv passes the isolated git environment on to server processes.
func gitEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
