/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// report.go: Report and its parts (Revision, Summary, Object, Change), and
// SchemaVersion of its JSON.

package review

// SchemaVersion names the JSON schema of a Report; it changes only when a
// field is renamed or removed.
const SchemaVersion = "bggitops.dev/diff/v1"

// Change of one object.
type Change string

// Object changes.
const (
	Added   Change = "added"
	Changed Change = "changed"
	Removed Change = "removed"
)

// Report is the outcome of a comparison.
type Report struct {
	SchemaVersion string   `json:"schemaVersion"`
	Path          string   `json:"path"`
	Base          Revision `json:"base"`
	Head          Revision `json:"head"`
	Summary       Summary  `json:"summary"`
	// Objects lists every added, changed or removed object, sorted by
	// kind, namespace and name; unchanged objects are left out.
	Objects []Object `json:"objects"`
}

// Revision is one side of a comparison: a Git ref and its commit, or the
// live cluster (Ref "cluster", no SHA).
type Revision struct {
	Ref string `json:"ref"`
	SHA string `json:"sha,omitempty"`
}

// Summary counts the objects per change.
type Summary struct {
	Added   int `json:"added"`
	Changed int `json:"changed"`
	Removed int `json:"removed"`
}

// Object is one object that changes.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Change     Change `json:"change"`
	// Diff is a unified diff of the object's YAML (changed objects only);
	// Secret values are masked.
	Diff string `json:"diff,omitempty"`
	// Deployment is what the controller will do (FlinkBlueGreenDeployments
	// only).
	Deployment *Plan `json:"deployment,omitempty"`
}

// ID is Kind namespace/name (Kind name when cluster-scoped).
func (o Object) ID() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// HasChanges reports whether anything is added, changed or removed.
func (r *Report) HasChanges() bool { return len(r.Objects) > 0 }
