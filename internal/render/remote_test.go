/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"io"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllowRemoteBases uses a file:// Git URL, which kustomize clones with
// the git CLI like any remote base, so the opt-in path runs without network.
func TestAllowRemoteBases(t *testing.T) {
	remote := newGitRepo(t)
	require.NoError(t, remote.write("base/kustomization.yaml", kustomization("cm.yaml")))
	require.NoError(t, remote.write("base/cm.yaml", configMap))
	remote.commit("remote base")

	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": kustomization("file://" + remote.dir + "//base?ref=main"),
	})
	_, err := Build(root, "app", Options{})
	require.ErrorIs(t, err, ErrRemoteRefused)

	objs, err := Build(root, "app", Options{AllowRemoteBases: true, AllowFileURLs: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"ConfigMap"}, kinds(objs))
}

// TestRemoteBaseGoesThroughTheSandbox: with remote bases on, a cloned remote
// base is held to the same rules as the repository: a symlink in it that
// leads out of the clone is refused, whatever it points at.
func TestRemoteBaseGoesThroughTheSandbox(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	require.NoError(t, os.WriteFile(secret, []byte(strings.Replace(configMap, "value", "OUTSIDE-SECRET", 1)), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(outside, "base"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "base", "kustomization.yaml"), []byte(kustomization("../secret.yaml")), 0o644))

	tests := []struct {
		name  string
		files map[string]string // in the remote repository; "-> " makes a symlink
		path  string            // of the base inside the remote repository
	}{
		{name: "absolute symlink to a file outside", path: "base", files: map[string]string{
			"base/kustomization.yaml": kustomization("cm.yaml"), "base/cm.yaml": "-> " + secret,
		}},
		{name: "symlink to /etc/passwd", path: "base", files: map[string]string{
			"base/kustomization.yaml": kustomization("passwd"), "base/passwd": "-> /etc/passwd",
		}},
		{name: "relative symlink climbing out of the clone", path: "base", files: map[string]string{
			"base/kustomization.yaml": kustomization("cm.yaml"), "base/cm.yaml": "-> ../../../../../../../../../../" + secret,
		}},
		{name: "symlinked directory outside", path: "base", files: map[string]string{
			"base/kustomization.yaml": kustomization("shared/secret.yaml"), "base/shared": "-> " + outside,
		}},
		{name: "symlinked base directory outside", path: "app", files: map[string]string{
			"app/kustomization.yaml": kustomization("../elsewhere"), "elsewhere": "-> " + filepath.Join(outside, "base"),
		}},
		{name: "patch through a symlink", path: "base", files: map[string]string{
			"base/kustomization.yaml": kustomization("cm.yaml") + "patches:\n  - path: p.yaml\n",
			"base/cm.yaml":            configMap, "base/p.yaml": "-> " + secret,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			remote := newGitRepo(t)
			for p, content := range tc.files {
				if target, ok := cutPrefix(content, "-> "); ok {
					full := filepath.Join(remote.dir, p)
					require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
					require.NoError(t, os.Symlink(target, full))
					continue
				}
				require.NoError(t, remote.write(p, content))
			}
			remote.commit("remote base")
			root := writeTree(t, map[string]string{
				"app/kustomization.yaml": kustomization("file://" + remote.dir + "//" + tc.path + "?ref=main"),
			})
			objs, err := Build(root, "app", Options{AllowRemoteBases: true, AllowFileURLs: true})
			t.Log(err)
			require.Error(t, err)
			assert.Nil(t, objs)
			assert.ErrorIs(t, err, ErrLeavesRepository)
			assert.NotContains(t, err.Error(), "OUTSIDE-SECRET")
			assert.NotContains(t, err.Error(), "root:x:0:0")
		})
	}
}

// serveGit serves the repositories under root over smart HTTP with the real
// `git http-backend`, as a forge would.
func serveGit(t *testing.T, root string) string {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	require.NoError(t, err)
	env := []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}
	for _, k := range []string{"PATH", "HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	srv := httptest.NewServer(&cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: env, Stderr: io.Discard})
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRemoteBasesOverHTTP: remote bases fetched from a Git server are held
// to the build's rules: file:// bases only with AllowFileURLs (they clone
// any repository on the controller's disk), and no openapi field in a
// remote base (it would change kustomize's schema under concurrent builds).
func TestRemoteBasesOverHTTP(t *testing.T) {
	local := newGitRepo(t) // a repository on the controller's disk
	require.NoError(t, local.write("base/kustomization.yaml", kustomization("cm.yaml")))
	require.NoError(t, local.write("base/cm.yaml", strings.Replace(configMap, "app-config", "local", 1)))
	local.commit("local")

	remote := newGitRepo(t)
	require.NoError(t, remote.write("base/kustomization.yaml", kustomization("cm.yaml")))
	require.NoError(t, remote.write("base/cm.yaml", configMap))
	require.NoError(t, remote.write("chained/kustomization.yaml", kustomization("file://"+local.dir+"//base?ref=main")))
	require.NoError(t, remote.write("schema/kustomization.yaml", kustomization("../base/cm.yaml")+"openapi:\n  version: v1.21.2\n"))
	remote.commit("remote")
	url := serveGit(t, filepath.Dir(remote.dir)) + "/repo//"

	build := func(resource string, opts Options) ([]*unstructuredT, error) {
		root := writeTree(t, map[string]string{"app/kustomization.yaml": kustomization(resource)})
		opts.AllowRemoteBases = true
		return Build(root, "app", opts)
	}

	objs, err := build(url+"base?ref=main", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"ConfigMap"}, kinds(objs))

	_, err = build("file://"+local.dir+"//base?ref=main", Options{})
	require.ErrorIs(t, err, ErrFileURLRefused)
	assert.Contains(t, err.Error(), "(in app/kustomization.yaml)")

	_, err = build(url+"chained?ref=main", Options{})
	require.ErrorIs(t, err, ErrFileURLRefused)
	assert.Contains(t, err.Error(), "(in remote base chained/kustomization.yaml)")
	objs, err = build(url+"chained?ref=main", Options{AllowFileURLs: true})
	require.NoError(t, err)
	assert.Equal(t, "local", objs[0].GetName())

	_, err = build(url+"schema?ref=main", Options{})
	require.ErrorIs(t, err, ErrRemoteOpenAPI)
	assert.Contains(t, err.Error(), "(in remote base schema/kustomization.yaml)")
}

// TestClonesBelongToTheirBuild: a clone directory is readable only by the
// build that touched it first (the one whose kustomize created it).
func TestClonesBelongToTheirBuild(t *testing.T) {
	clone, err := os.MkdirTemp("", "kustomize-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(clone) })
	require.NoError(t, os.WriteFile(filepath.Join(clone, "cm.yaml"), []byte(configMap), 0o644))
	clone, err = filepath.EvalSymlinks(clone)
	require.NoError(t, err)

	a, err := newDiskSandbox(t.TempDir())
	require.NoError(t, err)
	b, err := newDiskSandbox(t.TempDir())
	require.NoError(t, err)
	a.allowClones()
	b.allowClones()

	_, err = a.ReadFile(filepath.Join(clone, "cm.yaml"))
	require.NoError(t, err)
	_, err = b.ReadFile(filepath.Join(clone, "cm.yaml"))
	require.ErrorIs(t, err, ErrLeavesRepository, "another build's clone")
	require.ErrorIs(t, b.RemoveAll(clone), ErrReadOnly)

	a.releaseClones()
	_, err = b.ReadFile(filepath.Join(clone, "cm.yaml"))
	require.NoError(t, err)
	b.releaseClones()
}
