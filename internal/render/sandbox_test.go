/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestBadInputsRenderNothing: every bad repository yields no objects and a
// message that names the offending entry and file.
func TestBadInputsRenderNothing(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	require.NoError(t, os.WriteFile(secret, []byte(configMap), 0o644))

	tests := []struct {
		name  string
		path  string
		files map[string]string
		is    error
		msg   []string
	}{{
		name:  "dot-dot resource",
		path:  "./app",
		files: map[string]string{"app/kustomization.yaml": kustomization("../../etc/passwd")},
		is:    ErrLeavesRepository,
		msg:   []string{"kustomize build ./app: resource ../../etc/passwd leaves the repository (in app/kustomization.yaml)"},
	}, {
		name:  "dot-dot resource from an overlay",
		path:  "./overlays/prod",
		files: map[string]string{"overlays/prod/kustomization.yaml": kustomization("../../../etc/passwd")},
		is:    ErrLeavesRepository,
		msg:   []string{"kustomize build ./overlays/prod: resource ../../../etc/passwd leaves the repository (in overlays/prod/kustomization.yaml)"},
	}, {
		name: "dot-dot in a nested base",
		path: "overlays/prod",
		files: map[string]string{
			"overlays/prod/kustomization.yaml": kustomization("../../base"),
			"base/kustomization.yaml":          kustomization("cm.yaml", "../../outside/secret.yaml"),
			"base/cm.yaml":                     configMap,
		},
		is:  ErrLeavesRepository,
		msg: []string{"resource ../../outside/secret.yaml leaves the repository (in base/kustomization.yaml)"},
	}, {
		name: "symlink to a file outside",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("secret.yaml"),
			"app/secret.yaml":        "-> " + secret,
		},
		is:  ErrLeavesRepository,
		msg: []string{"resource secret.yaml: symlink app/secret.yaml -> " + secret + " leaves the repository"},
	}, {
		name: "relative symlink climbing out",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("passwd"),
			"app/passwd":             "-> ../../../../../../../../etc/passwd",
		},
		is:  ErrLeavesRepository,
		msg: []string{"symlink app/passwd -> ../../../../../../../../etc/passwd leaves the repository"},
	}, {
		name: "symlinked base directory outside",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("../shared"),
			"shared":                 "-> " + outside,
		},
		is:  ErrLeavesRepository,
		msg: []string{"resource ../shared: symlink shared -> " + outside},
	}, {
		name: "symlinked kustomization file outside",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": "-> " + secret,
		},
		is:  ErrLeavesRepository,
		msg: []string{"symlink app/kustomization.yaml"},
	}, {
		name:  "build path leaves the repository",
		path:  "../..",
		files: map[string]string{"app/kustomization.yaml": kustomization()},
		is:    ErrLeavesRepository,
		msg:   []string{"kustomize build ../..: path: ../.. leaves the repository"},
	}, {
		name:  "build path is absolute",
		path:  "/etc",
		files: map[string]string{"app/kustomization.yaml": kustomization()},
		is:    ErrAbsolutePath,
		msg:   []string{"path /etc"},
	}, {
		name:  "absolute resource",
		path:  "app",
		files: map[string]string{"app/kustomization.yaml": kustomization("/etc/passwd")},
		is:    ErrAbsolutePath,
		msg:   []string{"resource /etc/passwd: absolute paths are not allowed (in app/kustomization.yaml)"},
	}, {
		name: "absolute patch path",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("cm.yaml") + "patches:\n  - path: " + secret + "\n",
			"app/cm.yaml":            configMap,
		},
		is:  ErrAbsolutePath,
		msg: []string{"patch " + secret},
	}, {
		name:  "remote base URL",
		path:  "app",
		files: map[string]string{"app/kustomization.yaml": kustomization("https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.0.0")},
		is:    ErrRemoteRefused,
		msg:   []string{"resource https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.0.0: remote bases are disabled"},
	}, {
		name:  "scp-style remote base",
		path:  "app",
		files: map[string]string{"app/kustomization.yaml": kustomization("git@github.com:org/repo.git//base?ref=main")},
		is:    ErrRemoteRefused,
	}, {
		name:  "schemeless github base",
		path:  "app",
		files: map[string]string{"app/kustomization.yaml": kustomization("github.com/org/repo/base?ref=main")},
		is:    ErrRemoteRefused,
	}, {
		name: "remote patch file",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("cm.yaml") + "patches:\n  - path: http://example.com/patch.yaml\n",
			"app/cm.yaml":            configMap,
		},
		is: ErrRemoteRefused,
	}, {
		name: "generator config fetching a remote file",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": "generators:\n  - gen.yaml\n",
			"app/gen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\n" +
				"files:\n  - conf=https://example.com/conf.properties\n",
		},
		is:  ErrRemoteRefused,
		msg: []string{"generator gen.yaml: https://example.com/conf.properties: remote bases are disabled"},
	}, {
		name: "transformer config with a remote patch",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("cm.yaml") + "transformers:\n  - patch.yaml\n",
			"app/cm.yaml":            configMap,
			"app/patch.yaml": "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: x\n" +
				"path: http://example.com/p.yaml\ntarget:\n  kind: ConfigMap\n",
		},
		is: ErrRemoteRefused,
	}, {
		name: "generator config reading outside",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": "generators:\n  - gen.yaml\n",
			"app/gen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\n" +
				"files:\n  - passwd=../../../../../../etc/passwd\n",
		},
		is: ErrLeavesRepository,
	}, {
		name: "configMapGenerator reading outside",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": "configMapGenerator:\n  - name: x\n    files:\n      - passwd=../../etc/passwd\n",
		},
		is:  ErrLeavesRepository,
		msg: []string{"configMapGenerator file ../../etc/passwd leaves the repository"},
	}, {
		name: "invalid YAML resource",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("bad.yaml"),
			"app/bad.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n",
		},
		msg: []string{"kustomize build app:", "bad.yaml"},
	}, {
		name:  "invalid YAML kustomization",
		path:  "app",
		files: map[string]string{"app/kustomization.yaml": "resources: [a.yaml\n"},
		msg:   []string{"app/kustomization.yaml: invalid kustomization"},
	}, {
		name:  "missing file",
		path:  "app",
		files: map[string]string{"app/kustomization.yaml": kustomization("missing.yaml")},
		is:    ErrNotFound,
		msg:   []string{"kustomize build app: resource missing.yaml: does not exist (in app/kustomization.yaml)"},
	}, {
		name:  "missing build path",
		path:  "nowhere",
		files: map[string]string{"app/kustomization.yaml": kustomization()},
		is:    ErrNotFound,
		msg:   []string{"path nowhere is not a directory"},
	}, {
		name: "two objects with the same identity",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("a.yaml", "b.yaml"),
			"app/a.yaml":             configMap,
			"app/b.yaml":             configMap,
		},
		is:  ErrDuplicateObject,
		msg: []string{"kustomize build app: duplicate object ConfigMap.v1.[noGrp]/app-config.[noNs] (again in b.yaml)"},
	}, {
		name: "same identity in two API versions",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("a.yaml", "b.yaml"),
			"app/a.yaml":             "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: hpa\n",
			"app/b.yaml":             "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: hpa\n",
		},
		is:  ErrDuplicateObject,
		msg: []string{"duplicate object HorizontalPodAutoscaler/hpa"},
	}, {
		name: "symlink loop",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("loop.yaml"),
			"app/loop.yaml":          "-> loop.yaml",
		},
		msg: []string{"too many levels of symbolic links"},
	}, {
		name: "exec plugin",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": "generators:\n  - gen.yaml\n",
			"app/gen.yaml":           "apiVersion: someteam.example.com/v1\nkind: SecretsFromVault\nmetadata:\n  name: x\n",
		},
		msg: []string{"kustomize build app:", "external plugins disabled"},
	}, {
		name: "KRM exec function",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": "transformers:\n  - fn.yaml\n",
			"app/fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: x\n  annotations:\n" +
				"    config.kubernetes.io/function: |\n      exec:\n        path: /bin/cat\n",
		},
		// /bin/cat would succeed as a function (it echoes its input):
		// only the refusal makes this build fail.
		msg: []string{"kustomize build app:", "external plugins disabled"},
	}, {
		name: "helm chart",
		path: "app",
		files: map[string]string{
			"app/kustomization.yaml": "helmCharts:\n  - name: minecraft\n    repo: https://example.com/charts\n    version: 1.0.0\n",
		},
		is:  ErrHelmRefused,
		msg: []string{"kustomize build app: helm charts are not supported; render the chart into the repository (in app/kustomization.yaml)"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			objs, err := Build(root, tc.path, Options{Revision: "r", Source: "s/s"})
			require.Error(t, err)
			assert.Nil(t, objs)
			t.Log(err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			for _, m := range tc.msg {
				assert.Contains(t, err.Error(), m)
			}
			assert.NotContains(t, err.Error(), root, "messages show repository paths")
		})
	}
}

// panicFS panics on every read, standing in for a kustomize bug.
type panicFS struct{ filesys.FileSystem }

func (panicFS) ReadFile(string) ([]byte, error) { panic("boom") }

func TestPanicInsideKustomizeBecomesAnError(t *testing.T) {
	root := writeTree(t, map[string]string{"app/kustomization.yaml": kustomization("cm.yaml"), "app/cm.yaml": configMap})
	sb, err := newDiskSandbox(root)
	require.NoError(t, err)
	sb.inner = panicFS{sb.inner}
	_, err = runKustomize(sb, filepath.Join(sb.root, "app"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kustomize panicked: boom")
}

func TestSandboxRefusesWrites(t *testing.T) {
	sb, err := newDiskSandbox(t.TempDir())
	require.NoError(t, err)
	for _, w := range []func() error{
		func() error { return sb.WriteFile(filepath.Join(sb.root, "x"), nil) },
		func() error { return sb.MkdirAll(filepath.Join(sb.root, "d")) },
		func() error { return sb.RemoveAll(sb.root) },
		func() error { _, err := sb.Create(filepath.Join(sb.root, "y")); return err },
	} {
		assert.ErrorIs(t, w(), ErrReadOnly)
	}
	entries, err := os.ReadDir(sb.root)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestResolve(t *testing.T) {
	links := mapLinks(map[string]string{
		"/repo/in":       "sub",
		"/repo/abs":      "/repo/sub",
		"/repo/out":      "/etc",
		"/repo/up":       "../..",
		"/repo/sub/back": "../in",
		"/repo/loop":     "loop",
	})
	tests := []struct {
		in, want string
		err      string
	}{
		{in: "/repo", want: "/repo"},
		{in: "/repo/a/b", want: "/repo/a/b"},
		{in: "a/./b/../c", want: "/repo/a/c"},
		{in: "/repo/in/x", want: "/repo/sub/x"},
		{in: "/repo/abs/x", want: "/repo/sub/x"},
		{in: "/repo/sub/back/x", want: "/repo/sub/x"},
		{in: "/repo/in/..", want: "/repo"},
		{in: "/repo/../etc/passwd", err: "/repo/../etc/passwd leaves the repository"},
		{in: "/repository/x", err: "leaves the repository"},
		{in: "/etc/passwd", err: "/etc/passwd leaves the repository"},
		{in: "../x", err: "../x leaves the repository"},
		{in: "/repo/out/passwd", err: "symlink out -> /etc leaves the repository"},
		{in: "/repo/up/x", err: "symlink up -> ../.. leaves the repository"},
		{in: "/repo/loop", err: "too many levels"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := resolve(memRoot, tc.in, links)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestIsRemote(t *testing.T) {
	for in, want := range map[string]bool{
		"https://github.com/org/repo//base?ref=v1": true,
		"http://example.com/x.yaml":                true,
		"ssh://git@example.com/org/repo.git":       true,
		"file:///srv/git/repo.git//base":           true,
		"git::https://example.com/org/repo":        true,
		"git@github.com:org/repo.git":              true,
		"GitHub.com/org/repo/base":                 true,
		"s3://bucket/x":                            true,
		"../base":                                  false,
		"deployment.yaml":                          false,
		"github.company.internal/base":             false,
		"overlays/github.com":                      false,
	} {
		assert.Equal(t, want, isRemote(in), fmt.Sprint(in))
	}
}
