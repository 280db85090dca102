/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// TestFetchFollowsNoRedirect: a server that redirects the controller to
// another address (one inside the cluster) fails the fetch, and the
// listing alike, saying where to; the other address never sees a request
// nor the credentials.
func TestFetchFollowsNoRedirect(t *testing.T) {
	h := newHTTPRepo(t)
	h.Commit(map[string]string{"f": "1"}, "one")
	h.Push("main")
	reached := func() int64 { return h.srv.Listings() + h.srv.UploadPacks() }
	before := reached()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, h.srv.URL+"/app.git/info/refs?service=git-upload-pack", http.StatusFound)
	}))
	t.Cleanup(redirector.Close)

	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	o.URL = redirector.URL + "/app.git"
	_, err := Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonRedirected, "redirected to "+h.srv.URL+"/app.git/info/refs")
	assert.Contains(t, err.Error(), "set spec.url")
	_, err = List(context.Background(), o)
	assertFetchErr(t, err, ReasonRedirected, "redirects are not followed")
	assert.Equal(t, before, reached(), "the redirect's target saw no request")
}
