/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// receiver.go: receiverSplit, what config/receiver renders differently from
// config/default, turned into the chart's receiver.separate switch.

package main

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/render"
)

// receiverPath installs what configPath does with the push webhook
// receiver in a Deployment of its own; the chart's receiver.separate
// renders it.
const receiverPath = "config/receiver"

// separateIf wraps a template rendered only with receiver.separate.
const separateIf = "{{- if .Values.receiver.separate }}\n"

// split is how config/receiver differs from config/default: the objects
// only it has, and the string fields it sets otherwise in the others
// (token name → template action choosing between the two).
type split struct {
	added   []*unstructured.Unstructured
	actions map[string]string
}

// receiverSplit renders config/receiver, templates the objects both
// have where they differ (s.actions), and returns what only it has.
func receiverSplit(root string, objs []*unstructured.Unstructured) (*split, error) {
	other, err := render.Build(root, receiverPath, render.Options{})
	if err != nil {
		return nil, err
	}
	byKey := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		byKey[objectKey(u)] = u
	}
	s := &split{actions: map[string]string{}}
	for _, u := range other {
		def, ok := byKey[objectKey(u)]
		if !ok {
			s.added = append(s.added, u)
			continue
		}
		templated, err := s.diff(def.Object, u.Object, objectKey(u))
		if err != nil {
			return nil, err
		}
		def.Object = templated.(map[string]any)
	}
	return s, nil
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// diff returns def with each string that other sets otherwise replaced by
// a token choosing between the two; other differences are not templated.
func (s *split) diff(def, other any, at string) (any, error) {
	switch d := def.(type) {
	case map[string]any:
		o, ok := other.(map[string]any)
		if !ok || len(o) != len(d) {
			return nil, fmt.Errorf("%s: %s sets other fields than %s: teach hack/chart to template it", at, receiverPath, configPath)
		}
		out := map[string]any{}
		for k, v := range d {
			t, err := s.diff(v, o[k], at+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = t
		}
		return out, nil
	case []any:
		o, ok := other.([]any)
		if !ok || len(o) != len(d) {
			return nil, fmt.Errorf("%s: %s has another list than %s: teach hack/chart to template it", at, receiverPath, configPath)
		}
		out := make([]any, len(d))
		for i := range d {
			t, err := s.diff(d[i], o[i], fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
		return out, nil
	}
	return s.scalar(def, other, at)
}

func (s *split) scalar(def, other any, at string) (any, error) {
	if def == other {
		return def, nil
	}
	a, okA := def.(string)
	b, okB := other.(string)
	if !okA || !okB {
		return nil, fmt.Errorf("%s: %v in %s, %v in %s: teach hack/chart to template it", at, def, configPath, other, receiverPath)
	}
	name := fmt.Sprintf("split%s", strconv.Itoa(len(s.actions)))
	s.actions[name] = fmt.Sprintf("{{ if .Values.receiver.separate }}%s{{ else }}%s{{ end }}", strconv.Quote(b), strconv.Quote(a))
	return token(name), nil
}
