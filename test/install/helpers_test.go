/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package install tests the two ways bg-gitops is installed, `kubectl
// apply -k config/default` and the Helm chart charts/bg-gitops: that they
// make the same objects, and that a real kube-apiserver accepts them.
package install

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const (
	root = "../.."
	// installNamespace is where config/default installs, and where the
	// docs/install.md installs the chart.
	installNamespace = "bg-gitops-system"
	release          = "bg-gitops"
)

var chart = filepath.Join(root, "charts", "bg-gitops")

// binary returns the path of a tool in bin/; a missing one skips the test
// outside CI (testenv's skip policy).
func binary(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv(testenv.BinDirEnv)
	if dir == "" {
		dir = filepath.Join(root, "bin")
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		testenv.Require(t, fmt.Errorf("%s not found in %s: %w", name, dir, testenv.ErrBinaryMissing))
	}
	return p
}

// run runs a tool of bin/ and returns its standard output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := command(t, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %s: %s", name, strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// runErr runs a tool of bin/ that may fail and returns what it printed.
func runErr(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	out, err := command(t, name, args...).CombinedOutput()
	return string(out), err
}

// command is a tool of bin/; Helm keeps its cache and configuration in the
// test's directory.
func command(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary(t, name), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	return cmd
}

// helmTemplate renders the chart as `helm template` does.
func helmTemplate(t *testing.T, namespace string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", release, chart, "--namespace", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return decode(t, run(t, "helm", args...))
}

// configDefault renders config/default as kustomize does, with the
// controller's own build.
func configDefault(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.Build(root, "config/default", render.Options{})
	require.NoError(t, err)
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, u := range objs {
		out = append(out, normalize(t, u.Object))
	}
	return out
}

// decode parses multi-document YAML into objects.
func decode(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		m := map[string]any{}
		require.NoError(t, yaml.Unmarshal(doc, &m))
		if len(m) > 0 {
			out = append(out, normalize(t, m))
		}
	}
}

// normalize gives both renderings the same Go types (int64 numbers) by a
// JSON round trip, as the API server's client would see them.
func normalize(t *testing.T, m map[string]any) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.Marshal(m)
	require.NoError(t, err)
	js, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(js))
	return u
}

// key names an object across both renderings.
func key(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// controller returns the controller container of the Deployment.
func controller(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	d := find(t, objs, "Deployment", "bg-gitops-controller")
	containers, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	require.NoError(t, err)
	for _, c := range containers {
		if c.(map[string]any)["name"] == "controller" {
			return c.(map[string]any)
		}
	}
	t.Fatal("no controller container")
	return nil
}
