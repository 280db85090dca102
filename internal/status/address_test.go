/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestCheckAddress(t *testing.T) {
	for _, tc := range []struct {
		address  string
		insecure bool
		ok       bool
	}{
		{"", false, true},
		{"https://gitea.example.com", false, true},
		{"https://gitea.example.com/", false, true},
		{"https://example.com/gitlab", false, true},
		{"https://gitea.example.com:3000", false, true},
		{"http://gitea.example.com", false, false},
		{"http://127.0.0.1:3000", false, false},
		{"http://127.0.0.1:3000", true, true},
		{"HTTP://gitea.example.com", false, false},
		{"https://user:pass@gitea.example.com", false, false},
		{"https://gitea.example.com?", false, false},
		{"https://gitea.example.com/x?", false, false},
		{"https://gitea.example.com/?a=b", false, false},
		{"https://gitea.example.com/#x", false, false},
		{"ftp://gitea.example.com", true, false},
		{"https://", false, false},
		{"https:gitea.example.com", false, false},
		{"gitea.example.com", false, false},
	} {
		err := CheckAddress(tc.address, tc.insecure)
		if tc.ok != (err == nil) {
			t.Errorf("CheckAddress(%q, insecure=%v) = %v, want ok=%v", tc.address, tc.insecure, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInsecureAddress) {
			t.Errorf("CheckAddress(%q): %v is not ErrInsecureAddress", tc.address, err)
		}
		if err != nil && strings.Contains(err.Error(), "pass") {
			t.Errorf("CheckAddress(%q) names the password: %v", tc.address, err)
		}
	}
}

// TestHTTPAddressRefused: with an http:// address and no
// AllowInsecureHTTP, no provider is built and no request (which would
// carry the token in clear text) reaches the forge.
func TestHTTPAddressRefused(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	defer srv.Close()
	for _, provider := range []string{ProviderGitea, ProviderGitHub, ProviderGitLab} {
		_, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: provider, Address: srv.URL, Repository: "a/b"}, testToken, Options{})
		if !errors.Is(err, ErrInsecureAddress) {
			t.Errorf("%s: NewProvider(%s) = %v, want ErrInsecureAddress", provider, srv.URL, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the forge", n)
	}
}

// TestRedirectToHTTPNotFollowed: an https forge that redirects to http://
// does not get the token sent in clear text.
func TestRedirectToHTTPNotFollowed(t *testing.T) {
	var leaked atomic.Bool
	plain := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization") != "" || r.Header.Get("PRIVATE-TOKEN") != "")
	}))
	defer plain.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer tls.Close()
	for _, provider := range []string{ProviderGitea, ProviderGitHub} {
		p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: provider, Address: tls.URL, Repository: "a/b"}, testToken,
			Options{HTTP: tls.Client()})
		if err != nil {
			t.Fatal(err)
		}
		err = p.Post(context.Background(), sha40, Entry{Context: "c", State: StateSuccess})
		if err == nil || leaked.Load() {
			t.Errorf("%s: err = %v, token sent over http: %v", provider, err, leaked.Load())
		}
	}
}

// TestForgeErrorBodyCutAndScrubbed: whatever a forge (or any service the
// address names) answers, the error holds at most a short line of it,
// without the token.
func TestForgeErrorBodyCutAndScrubbed(t *testing.T) {
	page := "<html>\n<h1>internal</h1>\n" + strings.Repeat("db-password=hunter2 ", 20) + "echo: " + testToken + "\n" +
		strings.Repeat("x", 10_000) + "</html>"
	jsonMsg := `{"message":"` + strings.Repeat("internal detail ", 50) + testToken + `"}`
	for _, body := range []string{page, jsonMsg} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(body))
		}))
		for _, provider := range []string{ProviderGitea, ProviderGitHub, ProviderGitLab} {
			p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: provider, Address: srv.URL, Repository: "a/b"}, testToken,
				Options{AllowInsecureHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []func() error{
				func() error { return p.Post(context.Background(), sha40, Entry{Context: "c", State: StateSuccess}) },
				func() error { _, err := p.List(context.Background(), sha40); return err },
			} {
				err := call()
				if err == nil {
					t.Fatalf("%s: no error", provider)
				}
				msg := err.Error()
				if strings.Contains(msg, testToken) || strings.Contains(msg, testToken[:8]) {
					t.Errorf("%s: the token is in %q", provider, msg)
				}
				if n := utf8.RuneCountInString(msg); n > maxForgeText+150 {
					t.Errorf("%s: %d characters: %q", provider, n, msg)
				}
				if strings.ContainsAny(msg, "\n\r") {
					t.Errorf("%s: a line break in %q", provider, msg)
				}
			}
		}
		srv.Close()
	}
}

func TestForgeText(t *testing.T) {
	long := strings.Repeat("é", 500)
	if got := forgeText(long, ""); utf8.RuneCountInString(got) != maxForgeText || !utf8.ValidString(got) {
		t.Errorf("cut to %d runes, valid %v", utf8.RuneCountInString(got), utf8.ValidString(got))
	}
	// A token straddling the cut is removed before the cut.
	msg := strings.Repeat("a", maxForgeText-3) + " " + testToken
	if got := forgeText(msg, testToken); strings.Contains(got, testToken[:1]) {
		t.Errorf("part of the token kept: %q", got)
	}
	if got := forgeText("a\n\tb\x00c   d", ""); got != "a b c d" {
		t.Errorf("folded: %q", got)
	}
}
