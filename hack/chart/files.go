/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// files.go: Chart.yaml and values.yaml (chartYAML, valuesYAML), and
// staleFiles and write, which compare the generated files with the chart on
// disk and write them.

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// semver is a tag Helm accepts as a chart version once its "v" is gone.
var semver = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$`)

// chartYAML versions the chart as the image it installs: appVersion is
// config/default's tag, the chart version the same without its "v".
func chartYAML(v *values) ([]byte, error) {
	m := semver.FindStringSubmatch(v.tag)
	if m == nil {
		return nil, fmt.Errorf("image tag %q of %s is not a version (vMAJOR.MINOR.PATCH): the chart is versioned by it", v.tag, configPath)
	}
	return []byte(header + `apiVersion: v2
name: bg-gitops
description: GitOps for stateful Apache Flink jobs, rolled out blue/green from a savepoint on git push
type: application
version: ` + m[1] + `
appVersion: ` + v.tag + `
`), nil
}

var valuesTemplate = template.Must(template.New("values").Parse(header + `# With these values the chart installs what config/default installs, in
# the release's namespace (test/install checks it).

image:
  # The controller image: make image builds bg-gitops:$(VERSION).
  repository: {{ .Repository }}
  # Defaults to the chart's appVersion.
  tag: ""
  # Pins the image by digest (sha256:...) instead of the tag.
  digest: ""
  # IfNotPresent, so that an image loaded into kind or minikube is used.
  pullPolicy: {{ .PullPolicy }}

imagePullSecrets: []

# More than one replica elects a leader (--leader-elect); the others wait.
replicas: {{ .Replicas }}

# Appended to the controller's arguments (bg-gitops controller --help), e.g.
#   - --cluster-wide-namespaces=flink-system
extraArgs: []

resources:
{{ .Resources }}
nodeSelector: {}
tolerations: []
affinity: {}

receiver:
  # Run the push webhook receiver in a Deployment of its own, as
  # config/receiver does (and Flux's notification-controller): its pods,
  # which face the internet, run no reconciler and hold no lease, and the
  # controller's pods serve no webhook (--receiver-bind-address=0). Both run
  # the image above; the Service bg-gitops-receiver follows the receiver.
  separate: false
  # The receiver's replicas (no leader election: each serves webhooks).
  replicas: {{ .ReceiverReplicas }}
  resources:
{{ .ReceiverResources }}
  # Appended to the receiver's arguments, e.g. - --receiver-rate-limit=5
  extraArgs: []

crds:
  # Install and upgrade the bggitops.dev CustomResourceDefinitions with the
  # release. helm uninstall leaves them (helm.sh/resource-policy: keep):
  # deleting them deletes every GitRepository and FlinkBlueGreenDeployment,
  # and through their owner references the FlinkDeployments running the jobs.
  install: true
`))

func valuesYAML(v *values) ([]byte, error) {
	res, err := indentedYAML(v.resources, "  ")
	if err != nil {
		return nil, err
	}
	recv, err := indentedYAML(v.receiver.resources, "    ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = valuesTemplate.Execute(&b, map[string]any{"Repository": v.repository, "PullPolicy": v.pullPolicy,
		"Replicas": v.replicas, "Resources": res, "ReceiverReplicas": v.receiver.replicas, "ReceiverResources": strings.TrimSuffix(recv, "\n")})
	return b.Bytes(), err
}

// indentedYAML is v as YAML, each line indented.
func indentedYAML(v any, indent string) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	var indented strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l != "" {
			indented.WriteString(indent + l)
		}
	}
	return indented.String(), nil
}

// generatedOnDisk lists the files of the chart this command wrote.
func generatedOnDisk(root string) (map[string]bool, error) {
	dir := filepath.Join(root, chartDir)
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(data, []byte(header)) {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if os.IsNotExist(err) {
		return out, nil
	}
	return out, err
}

// staleFiles are the files that differ from files, are missing, or were
// generated for an object config/default no longer has.
func staleFiles(root string, files map[string][]byte) ([]string, error) {
	onDisk, err := generatedOnDisk(root)
	if err != nil {
		return nil, err
	}
	var stale []string
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(root, chartDir, p))
		if err != nil || !bytes.Equal(got, want) {
			stale = append(stale, p)
		}
	}
	for p := range onDisk {
		if _, ok := files[p]; !ok {
			stale = append(stale, p+" (no longer generated)")
		}
	}
	sort.Strings(stale)
	return stale, nil
}

// write writes files into the chart and removes the generated files that
// are no longer generated.
func write(root string, files map[string][]byte) error {
	onDisk, err := generatedOnDisk(root)
	if err != nil {
		return err
	}
	for p := range onDisk {
		if _, ok := files[p]; !ok {
			if err := os.Remove(filepath.Join(root, chartDir, p)); err != nil {
				return err
			}
		}
	}
	for p, data := range files {
		full := filepath.Join(root, chartDir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
