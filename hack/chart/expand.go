/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// expand.go: the tokens an object is marshalled with (token), and expand,
// which replaces each by its template action at the indentation of its
// line.

package main

import (
	"fmt"
	"regexp"
	"strings"
)

// An object is marshalled with tokens where the chart puts template
// actions; expand then replaces each token by its action, with the
// indentation of its line (sigs.k8s.io/yaml indents by two spaces).
func token(name string) string { return "__helm_" + name + "__" }

// scalars are replaced in place.
var scalars = map[string]string{
	"namespace":  `{{ .Release.Namespace }}`,
	"image":      `{{ include "bg-gitops.image" . }}`,
	"pullPolicy": `{{ .Values.image.pullPolicy }}`,
	"replicas":   `{{ .Values.replicas }}`,

	"receiverReplicas": `{{ .Values.receiver.replicas }}`,
}

// blocks are "key: <token>" lines whose value is the YAML of a value;
// optional ones are left out when the value is empty.
var (
	blocks = map[string]string{"resources": ".Values.resources", "receiverResources": ".Values.receiver.resources"}
	// lists are "- <token>" items followed by the items of a value.
	lists    = map[string]string{"extraArgs": ".Values.extraArgs", "receiverExtraArgs": ".Values.receiver.extraArgs"}
	optional = map[string]string{
		"imagePullSecrets": ".Values.imagePullSecrets",
		"nodeSelector":     ".Values.nodeSelector",
		"tolerations":      ".Values.tolerations",
		"affinity":         ".Values.affinity",
	}
)

var (
	labelsLine = regexp.MustCompile(`^( *)__helm_labels__: ""$`)
	itemLine   = regexp.MustCompile(`^( *)- __helm_([A-Za-z]+)__$`)
	blockLine  = regexp.MustCompile(`^( *)([A-Za-z]+): __helm_([A-Za-z]+)__$`)
)

// expand replaces the tokens of text by their actions, and those of
// extra (scalars, by token name).
func expand(text string, extra map[string]string) (string, error) {
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if m := labelsLine.FindStringSubmatch(line); m != nil {
			out = append(out, fmt.Sprintf(`%s{{- include "bg-gitops.labels" . | nindent %d }}`, m[1], len(m[1])))
			continue
		}
		if m := itemLine.FindStringSubmatch(line); m != nil && lists[m[2]] != "" {
			in := m[1]
			out = append(out, in+"{{- range "+lists[m[2]]+" }}", in+"- {{ . | quote }}", in+"{{- end }}")
			continue
		}
		if m := blockLine.FindStringSubmatch(line); m != nil {
			in, key := m[1], m[2]
			if v, ok := blocks[m[3]]; ok {
				out = append(out, in+key+":", fmt.Sprintf("%s  {{- toYaml %s | nindent %d }}", in, v, len(in)+2))
				continue
			}
			if v, ok := optional[key]; ok && key == m[3] {
				out = append(out, in+"{{- with "+v+" }}", in+key+":",
					fmt.Sprintf("%s  {{- toYaml . | nindent %d }}", in, len(in)+2), in+"{{- end }}")
				continue
			}
		}
		for _, actions := range []map[string]string{scalars, extra} {
			for name, action := range actions {
				line = strings.ReplaceAll(line, token(name), action)
			}
		}
		if strings.Contains(line, "__helm_") {
			return "", fmt.Errorf("no template action for %q", strings.TrimSpace(line))
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n") + "\n", nil
}
