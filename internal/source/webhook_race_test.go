/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// A `bg-gitops reconcile` whose request lands between the receiver's read
// of the GitRepository (no request pending) and its patch stays pending:
// the receiver's stamp, taken before, must not replace it, or the CLI's
// --wait sees only an older request handled and waits out its timeout.
func TestReceiverKeepsARequestMadeWhileItHandlesAPush(t *testing.T) {
	f := newHookFixture(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	stamp := time.Now().UTC()
	cliToken := stamp.Add(time.Second).Format(time.RFC3339Nano)
	cliRequest := []byte(`{"metadata":{"annotations":{"` + v1alpha1.ReconcileRequestedAtAnnotation + `":"` + cliToken + `"}}}`)
	c := &requestFirst{Client: f.c, request: cliRequest}
	rc := &Receiver{Client: c, MaxBodyBytes: 4096, Log: testr.New(t), Now: func() time.Time { return stamp }}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	f.url = srv.URL

	body := fmt.Sprintf(`{"ref":"refs/heads/main","after":"%s"}`, sha)
	code, status := f.do(t, hookRequest{"POST", f.path, headers(GitHubEventHeader, "push", GitHubSignatureHeader, "sha256="+sign(hookToken, body)), body})
	require.Equal(t, 200, code, status)
	require.True(t, c.done)
	assert.Equal(t, cliToken, f.annotation(t), "the request made meanwhile is still pending")
}

// requestFirst is a client whose first Patch of an object is preceded by
// another writer's merge patch of it.
type requestFirst struct {
	client.Client
	request []byte
	done    bool
}

func (c *requestFirst) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if !c.done {
		c.done = true
		other := &v1alpha1.GitRepository{}
		other.SetNamespace(obj.GetNamespace())
		other.SetName(obj.GetName())
		if err := c.Client.Patch(ctx, other, client.RawPatch("application/merge-patch+json", c.request)); err != nil {
			return err
		}
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}
