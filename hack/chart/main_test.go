/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = "../.."

// TestChartIsGenerated: charts/bg-gitops is what make chart generates
// from config/default now. (test/install checks what Helm renders.)
func TestChartIsGenerated(t *testing.T) {
	files, err := generate(root)
	require.NoError(t, err)
	stale, err := staleFiles(root, files)
	require.NoError(t, err)
	assert.Empty(t, stale, "%s is stale: run make chart", chartDir)
	for _, f := range []string{"Chart.yaml", "values.yaml", "templates/deployment-bg-gitops-controller.yaml"} {
		assert.Contains(t, files, f)
	}
}

// TestWriteRemovesWhatIsNoLongerGenerated: an object removed from
// config/default leaves the chart with make chart; hand-written files stay.
func TestWriteRemovesWhatIsNoLongerGenerated(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, chartDir)
	require.NoError(t, os.MkdirAll(filepath.Join(chart, "templates"), 0o755))
	old := filepath.Join(chart, "templates", "role-gone.yaml")
	mine := filepath.Join(chart, "templates", "_helpers.tpl")
	require.NoError(t, os.WriteFile(old, []byte(header+"kind: Role\n"), 0o644))
	require.NoError(t, os.WriteFile(mine, []byte("{{/* by hand */}}\n"), 0o644))
	files := map[string][]byte{"templates/role-new.yaml": []byte(header + "kind: Role\n")}

	stale, err := staleFiles(dir, files)
	require.NoError(t, err)
	assert.Equal(t, []string{"templates/role-gone.yaml (no longer generated)", "templates/role-new.yaml"}, stale)

	require.NoError(t, write(dir, files))
	stale, err = staleFiles(dir, files)
	require.NoError(t, err)
	assert.Empty(t, stale)
	assert.NoFileExists(t, old)
	assert.FileExists(t, mine)
}

// TestExpand: each token becomes its template action at the indentation
// of its line; a token without an action is an error, not a broken chart.
func TestExpand(t *testing.T) {
	in := `metadata:
  labels:
    __helm_labels__: ""
    app: x
  namespace: __helm_namespace__
spec:
  containers:
  - args:
    - run
    - __helm_extraArgs__
    image: __helm_image__
    resources: __helm_resources__
  nodeSelector: __helm_nodeSelector__
`
	want := `metadata:
  labels:
    {{- include "bg-gitops.labels" . | nindent 4 }}
    app: x
  namespace: {{ .Release.Namespace }}
spec:
  containers:
  - args:
    - run
    {{- range .Values.extraArgs }}
    - {{ . | quote }}
    {{- end }}
    image: {{ include "bg-gitops.image" . }}
    resources:
      {{- toYaml .Values.resources | nindent 6 }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
`
	got, err := expand(in, nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	_, err = expand("  hostNetwork: __helm_hostNetwork__\n", nil)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "no template action"), err)
}
