/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

func TestCheckURL(t *testing.T) {
	creds := basic(t, "http://h/r.git", testUser, testPass)
	token, err := AuthFromSecret(map[string][]byte{"bearerToken": []byte("tok-123456")}, "http://h/r.git")
	require.NoError(t, err)
	const fileFlag, httpFlag = "--allow-file-urls", "--allow-insecure-http"
	for _, tc := range []struct {
		name   string
		o      Options
		reason string // "" when allowed
		msg    string
	}{
		{"https with credentials", Options{URL: "https://h/r.git", Auth: creds}, "", ""},
		{"ssh", Options{URL: "ssh://git@h/r.git"}, "", ""},
		{"scp-like ssh", Options{URL: "git@h:r.git"}, "", ""},
		{"public http", Options{URL: "http://h/r.git"}, "", ""},
		{"http with a CA bundle only", Options{URL: "http://h/r.git", Auth: &Auth{CABundle: []byte("x")}}, "", ""},
		{"http with basic auth", Options{URL: "http://h/r.git", Auth: creds}, ReasonURLNotAllowed, httpFlag},
		{"http with a token", Options{URL: "http://h/r.git", Auth: token}, ReasonURLNotAllowed, httpFlag},
		{"http with a password in the url", Options{URL: "http://" + testUser + ":" + testPass + "@h/r.git"}, ReasonURLNotAllowed, httpFlag},
		{"http with a user in the url", Options{URL: "http://" + testUser + "@h/r.git"}, ReasonURLNotAllowed, httpFlag},
		{"http with credentials, allowed", Options{URL: "http://h/r.git", Auth: creds, AllowInsecureHTTP: true}, "", ""},
		{"file", Options{URL: "file:///cache/other-namespace/repo"}, ReasonURLNotAllowed, fileFlag},
		{"a bare path is a file url", Options{URL: "/cache/other-namespace/repo"}, ReasonURLNotAllowed, fileFlag},
		{"file, allowed", Options{URL: "file:///srv/repo", AllowFileURLs: true}, "", ""},
		{"insecure http does not allow file", Options{URL: "file:///srv/repo", AllowInsecureHTTP: true}, ReasonURLNotAllowed, fileFlag},
		{"git protocol", Options{URL: "git://h/r.git"}, ReasonInvalidSpec, `url scheme "git" is not supported`},
		{"a query", Options{URL: "http://h/admin/delete?x="}, ReasonInvalidSpec, "may not carry a query or fragment"},
		{"an empty query", Options{URL: "https://h/r.git?"}, ReasonInvalidSpec, "may not carry a query or fragment"},
		{"a fragment", Options{URL: "https://h/r.git#x"}, ReasonInvalidSpec, "may not carry a query or fragment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkURL(tc.o)
			if tc.reason == "" {
				assert.NoError(t, err)
				return
			}
			assertFetchErr(t, err, tc.reason, tc.msg)
			assert.True(t, err.(*Error).Terminal())
			if tc.reason == ReasonURLNotAllowed {
				assert.ErrorIs(t, err, ErrURLNotAllowed)
			}
		})
	}
}

// TestFetchURLPolicy: the policy holds for Fetch and List, before anything
// is sent: a server that would accept the credentials never sees them.
func TestFetchURLPolicy(t *testing.T) {
	h := newHTTPRepo(t)
	h.Commit(map[string]string{"f": "1"}, "one")
	h.Push("main")
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	o.AllowInsecureHTTP = false
	_, err := Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonURLNotAllowed, "http:// with credentials would send them unencrypted: use https://, or (local and test setups only) start the controller with --allow-insecure-http")
	_, err = List(context.Background(), o)
	assertFetchErr(t, err, ReasonURLNotAllowed, "--allow-insecure-http")
	assert.Zero(t, h.srv.Listings(), "nothing was sent")

	o.URL = "file://" + h.Bare
	o.Auth = nil
	_, err = Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonURLNotAllowed, "file:// URLs are disabled")

	// Public http needs no opt-in.
	gittest.Isolate(t)
	root := t.TempDir()
	pub := gittest.NewRepo(t, root, "public")
	c := pub.Commit(map[string]string{"f": "1"}, "one")
	pub.Push("main")
	srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{})
	po := Options{URL: srv.URL + "/public.git", Dir: t.TempDir(), Ref: v1alpha1.GitRepositoryRef{Branch: "main"}}
	assert.Equal(t, c, fetchOK(t, &po).Commit)
}
