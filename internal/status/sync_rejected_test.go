/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// A forge that answered the post with a definite rejection (422, 403
// read-only token, 429) did not store the status: it must not come back as
// an UnconfirmedError ("the forge may have it"), or the reconcile layer
// re-posts it forever (unconfirmedVerdicts) once desired has moved on.
func TestSyncDefiniteRejectionIsNotUnconfirmed(t *testing.T) {
	for _, code := range []int{http.StatusUnprocessableEntity, http.StatusForbidden, http.StatusTooManyRequests} {
		f := newFakeForge(t, "/api/v3", "acme/app", func(f *fakeForge, w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				writeJSON(w, code, map[string]string{"message": "No commit found for SHA"})
				return
			}
			githubAPI(f, w, r)
		})
		p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "github", Address: f.srv.URL, Repository: "acme/app"}, testToken, Options{AllowInsecureHTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Sync(context.Background(), p, desiredSet()[:1])
		var uc *UnconfirmedError
		if errors.As(err, &uc) {
			t.Errorf("HTTP %d (definitely not stored) returned as UnconfirmedError: %v", code, err)
		}
	}
}

// A 5xx answer leaves it unknown whether the forge stored the status.
func TestSyncServerErrorIsUnconfirmed(t *testing.T) {
	f := newFakeForge(t, "/api/v3", "acme/app", func(f *fakeForge, w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			writeJSON(w, http.StatusBadGateway, map[string]string{"message": "upstream timed out"})
			return
		}
		githubAPI(f, w, r)
	})
	p, err := NewProvider(v1alpha1.CommitStatusSpec{Provider: "github", Address: f.srv.URL, Repository: "acme/app"}, testToken, Options{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Sync(context.Background(), p, desiredSet()[:1])
	var uc *UnconfirmedError
	if !errors.As(err, &uc) {
		t.Fatalf("HTTP 502: want an UnconfirmedError, got %v", err)
	}
}

// On a rollout context a success is final: a failure wanted for the same
// commit later (its record lost) is not posted over it; a sync context
// takes it.
func TestPresentKeepsARolloutSuccess(t *testing.T) {
	rollout, sync := RolloutContext("ns", "job"), SyncContext("ns", "repo")
	list := []Entry{{Context: rollout, State: StateSuccess, Description: "job-green active"},
		{Context: sync, State: StateSuccess, Description: "applied to the cluster (3 objects)"}}
	if !present(list, Entry{Context: rollout, State: StateFailure, Description: "aborted"}) {
		t.Error("a failure would be posted over a rollout success")
	}
	if present(list, Entry{Context: sync, State: StateFailure, Description: "apply failed"}) {
		t.Error("a sync failure after a success is not posted")
	}
}
