/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

const gitUser, gitPass = "tenant", "s3cret-pass"

// gitServer serves a repository "app" over smart HTTP with basic auth and
// returns its bare directory and the options of a fetch of main.
func gitServer(t *testing.T) (string, source.Options, map[string][]byte) {
	t.Helper()
	gittest.Isolate(t)
	root := t.TempDir()
	r := gittest.NewRepo(t, root, "app")
	srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{Username: gitUser, Password: gitPass})
	o := source.Options{URL: srv.URL + "/app.git", Ref: v1alpha1.GitRepositoryRef{Branch: "main"},
		Timeout: 30 * time.Second, Dir: filepath.Join(t.TempDir(), "cache"), AllowInsecureHTTP: true}
	return r.Bare, o, map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPass)}
}

func TestWorkerFetchesWhatAnInProcessFetchDoes(t *testing.T) {
	skipOffLinux(t)
	bare, o, secret := gitServer(t)
	commit := gittest.ImportCommit(t, bare, "main", gittest.Text("app/cm.yaml", configMap))

	res, err := (&Pool{}).Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	require.NoError(t, err)
	assert.Equal(t, "main@sha1:"+commit, res.Revision)
	assert.True(t, res.Fetched)
	b, err := os.ReadFile(filepath.Join(res.Dir, "app", "cm.yaml"))
	require.NoError(t, err)
	assert.Equal(t, configMap, string(b), "the worker checked the commit out in the cache directory")

	o.LastRevision = res.Revision
	again, err := (&Pool{}).Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	require.NoError(t, err)
	assert.False(t, again.Fetched, "a poll of the same commit downloads nothing")
}

func TestWorkerFetchErrorKeepsItsReason(t *testing.T) {
	skipOffLinux(t)
	bare, o, secret := gitServer(t)
	gittest.ImportCommit(t, bare, "main", gittest.Text("a", "a"))
	wrong := map[string][]byte{"username": []byte(gitUser), "password": []byte("wrong")}

	auth, err := source.AuthFromSecret(wrong, o.URL)
	require.NoError(t, err)
	auth.SecretName = "git-auth"
	in := o
	in.Auth, in.Dir = auth, filepath.Join(t.TempDir(), "in-process")
	_, want := source.Fetch(t.Context(), in)
	require.Error(t, want)

	_, err = (&Pool{}).Fetch(t.Context(), "team-a", o, wrong, "git-auth", "")
	var se *source.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, source.ReasonAuthenticationFailed, se.Reason)
	assert.Equal(t, want.Error(), err.Error())
	assert.NotContains(t, err.Error(), "wrong", "no secret in the message")

	o.Ref = v1alpha1.GitRepositoryRef{Branch: "missing"}
	_, err = (&Pool{}).Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	assert.ErrorIs(t, err, source.ErrRefNotFound)
}

// TestFetchOfManyTinyObjectsEndsAtTheWorkersMemory: go-git indexes a pack
// in memory, object by object; with the pack's object limit off, a pack of
// very many tiny objects ends its worker at the memory limit, and the
// error names the revision it was fetching, so that it is not fetched
// again. The object limit on (the default) refuses it before indexing.
func TestFetchOfManyTinyObjectsEndsAtTheWorkersMemory(t *testing.T) {
	skipOffLinux(t)
	bare, o, secret := gitServer(t)
	commit := gittest.TinyObjects(t, bare, "main", 400_000)
	o.Limits = source.Limits{MaxObjects: -1, MaxFiles: -1, MaxFetchBytes: -1, MaxCheckoutBytes: -1}
	p := &Pool{MaxMemory: 192 << 20}
	_, err := p.Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	var died *DiedError
	require.ErrorAs(t, err, &died, "%v", err)
	assert.Equal(t, "main@sha1:"+commit, died.Revision)
	var le *render.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, render.LimitMemory, le.Limit, "%v", err)
	var se *source.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, source.ReasonLimitExceeded, se.Reason)

	o.Limits = source.Limits{}
	_, err = p.Fetch(t.Context(), "team-a", o, secret, "git-auth", "")
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "object count limit (--git-max-objects=50000)")
}

// TestFetchSkipsTheRevisionItWasToldToSkip: nothing is downloaded while the
// ref resolves to the revision a dead worker was fetching; a new commit is
// fetched.
func TestFetchSkipsTheRevisionItWasToldToSkip(t *testing.T) {
	skipOffLinux(t)
	bare, o, secret := gitServer(t)
	first := gittest.ImportCommit(t, bare, "main", gittest.Text("a", "1"))
	_, err := (&Pool{}).Fetch(t.Context(), "team-a", o, secret, "git-auth", "main@sha1:"+first)
	require.ErrorIs(t, err, ErrUnchanged)
	_, statErr := os.Stat(filepath.Join(o.Dir, "a"))
	assert.True(t, os.IsNotExist(statErr), "nothing checked out")

	second := gittest.ImportCommit(t, bare, "main", gittest.Text("a", "2"))
	res, err := (&Pool{}).Fetch(t.Context(), "team-a", o, secret, "git-auth", "main@sha1:"+first)
	require.NoError(t, err)
	assert.Equal(t, "main@sha1:"+second, res.Revision)
}

func TestAListOverSSHRunsInAWorkerUnderItsLimits(t *testing.T) {
	skipOffLinux(t)
	gittest.Isolate(t)
	root := t.TempDir()
	r := gittest.NewRepo(t, root, "app")
	commit := gittest.ImportCommit(t, r.Bare, "main", gittest.Text("app/cm.yaml", configMap))
	key, pub := gittest.NewKey(t)
	srv := gittest.ServeSSH(t, root, pub)
	secret := map[string][]byte{"identity": key, "known_hosts": srv.KnownHosts()}
	o := source.Options{URL: srv.URL("app.git"), Timeout: 10 * time.Second}
	pool := &Pool{MaxMemory: 256 << 20}

	refs, err := pool.List(t.Context(), "team-a", o, secret, "git-ssh")
	require.NoError(t, err)
	assert.Equal(t, commit, refs["refs/heads/main"])
	assert.EqualValues(t, 1, pool.Lists(), "listed in a worker")

	// A ref advertisement without end ends the worker, at its time or
	// memory limit, not this process.
	srv.Flood.Store(true)
	before := heapInUse()
	_, err = pool.List(t.Context(), "team-a", o, secret, "git-ssh")
	var se *source.Error
	require.ErrorAs(t, err, &se)
	assert.Contains(t, []string{source.ReasonTimeout, source.ReasonLimitExceeded}, se.Reason, err.Error())
	assert.Less(t, heapInUse()-before, int64(32<<20), "the listing's memory is the worker's")
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
