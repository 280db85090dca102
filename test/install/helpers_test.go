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
	"time"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/kube"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
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
	cmd := exec.Command(binary(t, name), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %s: %s", name, strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// The Helm commands of docs/install.md run here as Helm's own packages:
// the action the helm command runs, with the settings its flags give.

// helmTemplate renders the chart as `helm template bg-gitops
// charts/bg-gitops --namespace namespace --set s...` prints it: a
// client-side dry-run install (no API server), the manifest, then hooks.
func helmTemplate(t *testing.T, namespace string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true // as helm template: no check that the name is free
	rel, err := helmInstall(t, install, namespace, set...)
	require.NoError(t, err, "helm template")
	var out strings.Builder
	fmt.Fprintln(&out, strings.TrimSpace(rel.Manifest))
	for _, h := range rel.Hooks {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return decode(t, out.String())
}

// helmInstallChart installs the chart as `helm install bg-gitops
// charts/bg-gitops --namespace namespace --kubeconfig kubeconfig
// [--create-namespace]` does, and returns its error.
func helmInstallChart(t *testing.T, kubeconfig, namespace string, createNamespace bool) error {
	t.Helper()
	install := action.NewInstall(helmConfig(t, kubeconfig, namespace))
	install.CreateNamespace = createNamespace
	// The defaults of helm install's flags (--wait, --timeout).
	install.WaitStrategy = kube.HookOnlyStrategy
	install.Timeout = 300 * time.Second
	_, err := helmInstall(t, install, namespace)
	return err
}

// helmUninstall uninstalls the release as `helm uninstall bg-gitops
// --namespace namespace --kubeconfig kubeconfig` does.
func helmUninstall(t *testing.T, kubeconfig, namespace string) {
	t.Helper()
	uninstall := action.NewUninstall(helmConfig(t, kubeconfig, namespace))
	// The defaults of helm uninstall's flags (--wait, --timeout, --cascade).
	uninstall.WaitStrategy = kube.HookOnlyStrategy
	uninstall.Timeout = 300 * time.Second
	uninstall.DeletionPropagation = "background"
	_, err := uninstall.Run(release)
	require.NoError(t, err, "helm uninstall")
}

// helmInstall runs install of the chart with the values of --set s...
// into namespace, as helm install and helm template run it.
func helmInstall(t *testing.T, install *action.Install, namespace string, set ...string) (*helmrelease.Release, error) {
	t.Helper()
	vals, err := (&values.Options{Values: set}).MergeValues(getter.Providers{})
	require.NoError(t, err)
	ch, err := loader.Load(chart)
	require.NoError(t, err)
	install.ReleaseName = release
	install.Namespace = namespace
	r, err := install.Run(ch, vals)
	if r == nil {
		return nil, err
	}
	rel, ok := r.(*helmrelease.Release)
	require.True(t, ok, "a release of Helm's v1 format: %T", r)
	return rel, err
}

// helmConfig is the configuration the helm command builds from
// --kubeconfig and --namespace: releases stored as Secrets (Helm's
// default driver) in namespace.
func helmConfig(t *testing.T, kubeconfig, namespace string) *action.Configuration {
	t.Helper()
	settings := cli.New()
	settings.KubeConfig = kubeconfig
	settings.SetNamespace(namespace)
	cfg := action.NewConfiguration()
	require.NoError(t, cfg.Init(settings.RESTClientGetter(), settings.Namespace(), "secret"))
	return cfg
}

// configDefault renders config/default as kustomize does, with the
// controller's own build.
func configDefault(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return configDir(t, "config/default")
}

// configDir is the kustomization at dir, rendered and normalized.
func configDir(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.Build(root, dir, render.Options{})
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
