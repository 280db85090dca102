/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// classify.go: Classify, which sorts a spec change into a FLIP-503 DiffType
// (suspend, resume, savepoint redeploy, transition, patch child, ignore).

package bluegreen

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

// DiffType is the class of a spec change, as in FLIP-503.
type DiffType string

// Spec change classes, from strongest to weakest.
const (
	// DiffSuspend: template job.state changed to suspended (in place).
	DiffSuspend DiffType = "SUSPEND"
	// DiffResume: template job.state changed from suspended (in place).
	DiffResume DiffType = "RESUME"
	// DiffSavepointRedeploy: savepointRedeployNonce set to a new value; a
	// new colour starts from the template's initialSavepointPath.
	DiffSavepointRedeploy DiffType = "SAVEPOINT_REDEPLOY"
	// DiffTransition: a blue/green transition (with a savepoint unless the
	// upgrade mode is stateless).
	DiffTransition DiffType = "TRANSITION"
	// DiffPatchChild: the active child is patched in place.
	DiffPatchChild DiffType = "PATCH_CHILD"
	// DiffIgnore: nothing the children carry changed.
	DiffIgnore DiffType = "IGNORE"
)

// Diff is a classified spec change.
type Diff struct {
	Type DiffType
	// Fields are the dotted paths that caused Type, sorted. Paths inside
	// template.spec are relative to it ("image", "job.upgradeMode",
	// "flinkConfiguration.parallelism.default"); for IGNORE they list the
	// changed parent-level fields, prefixed "spec." ("spec.configuration.…",
	// "spec.promotion.mode", "spec.template.metadata.…", "spec.ingress").
	Fields []string
}

// patchableConfigPrefixes are flinkConfiguration keys FLIP-503 patches in
// place.
var patchableConfigPrefixes = []string{"job.autoscaler", "parallelism.default", "kubernetes.operator"}

// patchableJobFields are job fields FLIP-503 patches in place.
var patchableJobFields = map[string]bool{
	"job.upgradeMode": true, "job.initialSavepointPath": true, "job.allowNonRestoredState": true,
	"job.savepointTriggerNonce": true, "job.checkpointTriggerNonce": true, "job.autoscalerResetNonce": true,
	// Removing a nonce redeploys nothing.
	"job.savepointRedeployNonce": true,
}

// Classify classifies the change from old to new the way FLIP-503 does:
// only template.spec matters; SUSPEND/RESUME win over everything, then
// SAVEPOINT_REDEPLOY, then TRANSITION over PATCH_CHILD. Unset job.state,
// job.upgradeMode and mode equal their defaults (running, stateless,
// native), and flinkConfiguration compares flat and nested keys alike.
// old == nil is a first deployment: TRANSITION with no fields.
func Classify(old, new *v1alpha1.FlinkBlueGreenDeploymentSpec) Diff {
	if new == nil {
		return Diff{Type: DiffIgnore}
	}
	if old == nil {
		return Diff{Type: DiffTransition}
	}
	if d, ok := classifyJobState(old, new); ok {
		return d
	}
	changed := changedPaths(flattenTemplate(&old.Template.Spec), flattenTemplate(&new.Template.Spec))
	if contains(changed, "job.savepointRedeployNonce") && new.Template.Spec.Job != nil &&
		new.Template.Spec.Job.SavepointRedeployNonce != nil {
		return Diff{Type: DiffSavepointRedeploy, Fields: []string{"job.savepointRedeployNonce"}}
	}
	if len(changed) == 0 {
		return Diff{Type: DiffIgnore, Fields: changedPaths(flattenParent(old), flattenParent(new))}
	}
	var transition, patch []string
	for _, p := range changed {
		if patchable(p, new) {
			patch = append(patch, p)
		} else {
			transition = append(transition, p)
		}
	}
	if len(transition) > 0 {
		return Diff{Type: DiffTransition, Fields: transition}
	}
	return Diff{Type: DiffPatchChild, Fields: patch}
}

func classifyJobState(old, new *v1alpha1.FlinkBlueGreenDeploymentSpec) (Diff, bool) {
	o, n := old.Template.Spec.JobStateOrDefault(), new.Template.Spec.JobStateOrDefault()
	switch {
	case o == n:
		return Diff{}, false
	case n == v1alpha1.JobStateSuspended:
		return Diff{Type: DiffSuspend, Fields: []string{"job.state"}}, true
	case o == v1alpha1.JobStateSuspended:
		return Diff{Type: DiffResume, Fields: []string{"job.state"}}, true
	}
	return Diff{}, false
}

func patchable(path string, new *v1alpha1.FlinkBlueGreenDeploymentSpec) bool {
	if patchableJobFields[path] {
		return true
	}
	if path == "restartNonce" {
		return new.Template.Spec.RestartNonce == nil
	}
	if key, ok := strings.CutPrefix(path, "flinkConfiguration."); ok {
		for _, p := range patchableConfigPrefixes {
			if strings.HasPrefix(key, p) {
				return true
			}
		}
	}
	return false
}

// flattenTemplate maps every leaf of a FlinkDeployment spec, defaults
// applied, to its dotted path.
func flattenTemplate(s *v1alpha1.FlinkDeploymentSpec) map[string]string {
	n := s.DeepCopy()
	if n.Mode == "" {
		n.Mode = "native"
	}
	if n.Job == nil {
		n.Job = &v1alpha1.JobSpec{}
	}
	n.Job.State = s.JobStateOrDefault()
	n.Job.UpgradeMode = s.UpgradeModeOrDefault()
	return flattenJSON(n)
}

// flattenParent maps the parent-level fields (all but template.spec).
func flattenParent(s *v1alpha1.FlinkBlueGreenDeploymentSpec) map[string]string {
	n := s.DeepCopy()
	n.Template.Spec = v1alpha1.FlinkDeploymentSpec{}
	out := map[string]string{}
	for k, v := range flattenJSON(n) {
		if !strings.HasPrefix(k, "template.spec") {
			out["spec."+k] = v
		}
	}
	return out
}

func flattenJSON(v any) map[string]string {
	raw, err := json.Marshal(v)
	if err != nil {
		// Raw JSON fields that do not parse cannot be compared by value.
		return map[string]string{"": "unmarshalable"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return map[string]string{"": string(raw)}
	}
	out := map[string]string{}
	flattenInto(out, "", tree)
	return out
}

func flattenInto(out map[string]string, prefix string, v any) {
	switch t := v.(type) {
	case map[string]any:
		// In key order: a key spelled both flat and nested ("a.b" and
		// a: {b}) must flatten to the same value on every call, or the
		// same spec would differ from itself.
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flattenInto(out, p, t[k])
		}
	case nil:
		// Null and absent are the same.
	case string:
		// A string is not the number it spells ("1" vs 1: one of them the
		// cluster may reject), except in flinkConfiguration, whose values
		// Flink reads as strings either way.
		out[prefix] = t
		if !strings.HasPrefix(prefix, "flinkConfiguration.") {
			out[prefix] = strconv.Quote(t)
		}
	case json.Number:
		out[prefix] = t.String()
	case bool:
		out[prefix] = map[bool]string{true: "true", false: "false"}[t]
	default:
		b, _ := json.Marshal(t)
		out[prefix] = string(b)
	}
}

func changedPaths(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
