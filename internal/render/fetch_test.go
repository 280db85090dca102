/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leakServer stands in for an internal service a tenant should not reach:
// it answers every path with content that would land in a rendered object,
// and counts the requests it got.
func leakServer(t *testing.T) (url string, hits *atomic.Int64) {
	t.Helper()
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch {
		case strings.HasSuffix(r.URL.Path, ".json"):
			_, _ = w.Write([]byte(`[{"op": "add", "path": "/data/leak", "value": "INTERNAL-SECRET"}]`))
		default:
			_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  leak: INTERNAL-SECRET\n"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// TestRemoteOffRefusesEveryLoadedURL: with remote bases off, no field that
// kustomize loads through its loader (which GETs any http(s) URL) may name a
// URL, whether in the kustomization, in an inline plugin config, in a plugin
// config file or in plugin configs built by a kustomization directory. The
// error names the field and the file, and the server never sees a request.
func TestRemoteOffRefusesEveryLoadedURL(t *testing.T) {
	base, hits := leakServer(t)
	u := base + "/x.yaml"
	j := base + "/x.json"
	const cm = "app/cm.yaml"
	target := "    target:\n      kind: ConfigMap\n      name: app-config\n"
	inline := func(field, cfg string) string {
		return kustomization("cm.yaml") + field + ":\n  - |\n" + indent(cfg, "    ")
	}
	tests := []struct {
		name  string
		files map[string]string
		msg   []string // besides "remote bases are disabled" and the URL
	}{{
		name:  "patchesJson6902 path",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml") + "patchesJson6902:\n  - path: " + j + "\n" + target},
		msg:   []string{"patchesJson6902 path", "(in app/kustomization.yaml)"},
	}, {
		name:  "patches path",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml") + "patches:\n  - path: " + u + "\n"},
		msg:   []string{"patch", "(in app/kustomization.yaml)"},
	}, {
		name:  "patchesStrategicMerge entry",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml") + "patchesStrategicMerge:\n  - " + u + "\n"},
		msg:   []string{"(in app/kustomization.yaml)"},
	}, {
		name:  "replacements path",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml") + "replacements:\n  - path: " + u + "\n"},
		msg:   []string{"replacement", "(in app/kustomization.yaml)"},
	}, {
		name:  "openapi path",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml") + "openapi:\n  path: " + j + "\n"},
		msg:   []string{"openapi", "(in app/kustomization.yaml)"},
	}, {
		name:  "crds entry",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml") + "crds:\n  - " + j + "\n"},
		msg:   []string{"crd", "(in app/kustomization.yaml)"},
	}, {
		name:  "configurations entry",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml") + "configurations:\n  - " + u + "\n"},
		msg:   []string{"configuration", "(in app/kustomization.yaml)"},
	}, {
		name:  "configMapGenerator file with a key",
		files: map[string]string{"app/kustomization.yaml": "configMapGenerator:\n  - name: x\n    files:\n      - leak=" + u + "\n"},
		msg:   []string{"configMapGenerator", "(in app/kustomization.yaml)"},
	}, {
		name:  "secretGenerator env file",
		files: map[string]string{"app/kustomization.yaml": "secretGenerator:\n  - name: x\n    envs:\n      - " + u + "\n"},
		msg:   []string{"secretGenerator", "(in app/kustomization.yaml)"},
	}, {
		name: "inline transformer: PatchJson6902Transformer",
		files: map[string]string{"app/kustomization.yaml": inline("transformers",
			"apiVersion: builtin\nkind: PatchJson6902Transformer\nmetadata:\n  name: p\ntarget:\n  kind: ConfigMap\n  name: app-config\npath: "+j+"\n")},
		msg: []string{"transformers[0]", "path", "(in app/kustomization.yaml)"},
	}, {
		name: "inline transformer: PatchTransformer",
		files: map[string]string{"app/kustomization.yaml": inline("transformers",
			"apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: "+u+"\n")},
		msg: []string{"transformers[0]", "path", "(in app/kustomization.yaml)"},
	}, {
		name: "inline transformer: PatchStrategicMergeTransformer",
		files: map[string]string{"app/kustomization.yaml": inline("transformers",
			"apiVersion: builtin\nkind: PatchStrategicMergeTransformer\nmetadata:\n  name: p\npaths:\n  - "+u+"\n")},
		msg: []string{"transformers[0]", "paths[0]"},
	}, {
		name: "inline transformer: ReplacementTransformer",
		files: map[string]string{"app/kustomization.yaml": inline("transformers",
			"apiVersion: builtin\nkind: ReplacementTransformer\nmetadata:\n  name: p\nreplacements:\n  - path: "+u+"\n")},
		msg: []string{"transformers[0]", "replacements[0].path"},
	}, {
		name: "inline transformer: ValueAddTransformer target file",
		files: map[string]string{"app/kustomization.yaml": inline("transformers",
			"apiVersion: builtin\nkind: ValueAddTransformer\nmetadata:\n  name: p\ntargetFilePath: "+u+"\n")},
		msg: []string{"transformers[0]", "targetFilePath"},
	}, {
		name: "inline generator: ConfigMapGenerator",
		files: map[string]string{"app/kustomization.yaml": inline("generators",
			"apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\nfiles:\n  - leak="+u+"\n")},
		msg: []string{"generators[0]", "files[0]"},
	}, {
		name: "inline validator: PatchTransformer",
		files: map[string]string{"app/kustomization.yaml": inline("validators",
			"apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: "+u+"\n")},
		msg: []string{"validators[0]", "path"},
	}, {
		name: "plugin config file: PatchJson6902Transformer",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("cm.yaml") + "transformers:\n  - t.yaml\n",
			"app/t.yaml":             "apiVersion: builtin\nkind: PatchJson6902Transformer\nmetadata:\n  name: p\ntarget:\n  kind: ConfigMap\n  name: app-config\npath: " + j + "\n",
		},
		msg: []string{"transformer t.yaml", "path", "(in app/kustomization.yaml)"},
	}, {
		name: "plugin configs built by a kustomization directory",
		files: map[string]string{
			"app/kustomization.yaml": kustomization("cm.yaml") + "transformers:\n  - ../plugins\n",
			// The URL is set by a JSON patch, so no file holds it as a value.
			"plugins/kustomization.yaml": kustomization("t.yaml") +
				"patches:\n  - patch: '[{\"op\": \"replace\", \"path\": \"/path\", \"value\": \"" + u + "\"}]'\n" +
				"    target:\n      kind: PatchTransformer\n",
			"plugins/t.yaml": "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: placeholder.yaml\n",
		},
		msg: []string{"transformer ../plugins", "PatchTransformer", "path", "(in app/kustomization.yaml)"},
	}, {
		name: "component with a remote patch",
		files: map[string]string{
			"app/kustomization.yaml":  kustomization("cm.yaml") + "components:\n  - ../comp\n",
			"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatchesJson6902:\n  - path: " + j + "\n" + target,
		},
		msg: []string{"patchesJson6902 path", "(in comp/kustomization.yaml)"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{cm: configMap}
			for k, v := range tc.files {
				files[k] = v
			}
			root := writeTree(t, files)
			before := hits.Load()
			objs, err := Build(root, "app", Options{})
			t.Log(err)
			assert.Equal(t, before, hits.Load(), "kustomize fetched the URL")
			require.Error(t, err)
			assert.Nil(t, objs)
			assert.ErrorIs(t, err, ErrRemoteRefused)
			assert.Contains(t, err.Error(), base)
			for _, m := range tc.msg {
				assert.Contains(t, err.Error(), m)
			}
			assert.NotContains(t, err.Error(), root)
		})
	}
}

func TestRefusedURLsHideCredentials(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/cm.yaml": configMap,
		"app/kustomization.yaml": kustomization("cm.yaml") +
			"patchesJson6902:\n  - path: https://deploy:s3cr3t-t0ken@git.example.com/p.json\n    target:\n      kind: ConfigMap\n",
	})
	_, err := Build(root, "app", Options{})
	require.ErrorIs(t, err, ErrRemoteRefused)
	assert.NotContains(t, err.Error(), "s3cr3t-t0ken")
	assert.Contains(t, err.Error(), "https://***@git.example.com/p.json")
}

// TestURLsAsDataAreNotRefused: a URL kustomize never loads (an annotation,
// a literal, an inline patch value) is data, not a remote reference.
func TestURLsAsDataAreNotRefused(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/cm.yaml": configMap,
		"app/kustomization.yaml": kustomization("cm.yaml") +
			"commonAnnotations:\n  docs: https://example.com/docs\n" +
			"configMapGenerator:\n  - name: urls\n    literals:\n      - API=https://api.example.com\n" +
			"    options:\n      annotations:\n        link: https://example.com\n" +
			"patches:\n  - patch: '[{\"op\": \"add\", \"path\": \"/data/url\", \"value\": \"https://example.com\"}]'\n" +
			"    target:\n      kind: ConfigMap\n      name: app-config\n" +
			"transformers:\n  - |\n    apiVersion: builtin\n    kind: AnnotationsTransformer\n    metadata:\n      name: a\n" +
			"    annotations:\n      source: https://example.com/repo\n    fieldSpecs:\n      - path: metadata/annotations\n        create: true\n",
	})
	objs, err := Build(root, "app", Options{})
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.Equal(t, "https://example.com/repo", objs[0].GetAnnotations()["source"])
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}
