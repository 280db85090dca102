/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// settings.go: settingsChanges, changes of a deployment's promotion mode and
// spec.configuration that roll nothing out but change how rollouts run.

package review

import (
	"fmt"
	"maps"
	"slices"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// settingsChanges names the changes of a FlinkBlueGreenDeployment's own
// settings, which roll nothing out now but change how this and the next
// rollouts run: the promotion mode and the timers and options of
// spec.configuration, each with its old and new value.
func settingsChanges(old, cur *v1alpha1.FlinkBlueGreenDeploymentSpec) []string {
	var out []string
	if o, n := old.PromotionMode(), cur.PromotionMode(); o != n {
		out = append(out, fmt.Sprintf("promotion.mode %s → %s", o, n))
	}
	keys := slices.Sorted(maps.Keys(old.Configuration))
	for k := range cur.Configuration {
		if _, ok := old.Configuration[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if o, n := orDefault(old.Configuration, k), orDefault(cur.Configuration, k); o != n {
			out = append(out, fmt.Sprintf("configuration %s %s → %s", k, o, n))
		}
	}
	return out
}

func orDefault(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%q", v)
	}
	return "(default)"
}
