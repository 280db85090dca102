/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// overridden.go: gitSet, a child's spec with the fields another field
// manager overrode read back as Git last set them.

package bluegreen

import (
	"encoding/json"
	"strings"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// gitSet is the child's spec with the overridden fields (see
// Child.Overridden) as tpl, the spec Git last set, has them, absent where
// it does not set them. The job state is always the child's own: whether
// it runs decides how any change rolls out (a job suspended by hand takes
// it in place, and resumes).
func gitSet(child, tpl *v1alpha1.FlinkDeploymentSpec, overridden []string) v1alpha1.FlinkDeploymentSpec {
	c, t := specMap(child), specMap(tpl)
	if c == nil || t == nil {
		return *child.DeepCopy()
	}
	for _, p := range overridden {
		if p != "job.state" {
			copyPath(c, t, p)
		}
	}
	var out v1alpha1.FlinkDeploymentSpec
	b, err := json.Marshal(c)
	if err != nil || json.Unmarshal(b, &out) != nil {
		return *child.DeepCopy()
	}
	return out
}

func specMap(s *v1alpha1.FlinkDeploymentSpec) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// copyPath sets the field at the dotted path p of dst to its value in
// src, or removes it when src lacks it.
func copyPath(dst, src map[string]any, p string) {
	key, rest := splitKey(dst, src, p)
	if rest == "" {
		if v, ok := src[key]; ok {
			dst[key] = v
		} else {
			delete(dst, key)
		}
		return
	}
	sub, _ := src[key].(map[string]any)
	next, ok := dst[key].(map[string]any)
	if !ok {
		if sub == nil {
			return // neither sets it
		}
		next = map[string]any{}
		dst[key] = next
	}
	if sub == nil {
		sub = map[string]any{}
	}
	copyPath(next, sub, rest)
}

// splitKey splits the first key off p. A key may hold dots (those of
// flinkConfiguration do): the longest key of either map that p starts
// with wins.
func splitKey(a, b map[string]any, p string) (key, rest string) {
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if (p == k || strings.HasPrefix(p, k+".")) && len(k) > len(key) {
				key = k
			}
		}
	}
	if key == "" {
		key, rest, _ = strings.Cut(p, ".")
		return key, rest
	}
	return key, strings.TrimPrefix(p[len(key):], ".")
}
