/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
)

// Options of a build.
type Options struct {
	// AllowRemoteBases lets kustomizations name remote bases and resources
	// (Git URLs, HTTP files). Off by default: a build then touches nothing
	// but the repository.
	AllowRemoteBases bool
	// Revision (<ref>@sha1:<hex>) is stamped as bggitops.dev/revision.
	Revision string
	// Source (<namespace>/<name>) is stamped as bggitops.dev/source.
	Source string
	// TargetNamespace, when set, becomes the namespace of every namespaced
	// object; cluster-scoped kinds keep none.
	TargetNamespace string
	// IsClusterScoped, when set, decides the scope of kinds that neither the
	// built-in Kubernetes schema nor a CRD in the build knows (a reconciler
	// passes its RESTMapper here). Unknown kinds default to namespaced.
	IsClusterScoped func(gvk schema.GroupVersionKind) (clusterScoped, known bool)
}

// kustomizeMu serialises kustomize runs: krusty sets the process-wide
// OpenAPI schema on every run, which is not safe for concurrent builds.
var kustomizeMu sync.Mutex

// Build runs kustomize in-process on the directory path inside root (a
// checkout) and returns the objects, stamped and sorted deterministically.
func Build(root, path string, opts Options) ([]*unstructured.Unstructured, error) {
	sb, err := newDiskSandbox(root)
	if err != nil {
		return nil, &BuildError{Path: path, Err: err}
	}
	return build(sb, path, opts, root)
}

// BuildYAML is Build rendered as multi-document YAML.
func BuildYAML(root, path string, opts Options) ([]byte, error) {
	objs, err := Build(root, path, opts)
	if err != nil {
		return nil, err
	}
	return EncodeYAML(objs)
}

// build renders path inside the sandbox; aliases are other spellings of the
// root stripped from error messages.
func build(sb *sandboxFS, path string, opts Options, aliases ...string) ([]*unstructured.Unstructured, error) {
	fail := func(err error) error {
		return &BuildError{Path: path, Err: err, root: append([]string{sb.root}, aliases...)}
	}
	dir, err := buildDir(sb, path)
	if err != nil {
		return nil, fail(err)
	}
	if opts.AllowRemoteBases {
		sb.allowClones()
	}
	pf := &preflight{fs: sb, allowRemote: opts.AllowRemoteBases, seen: map[string]bool{}}
	if err := pf.dir(dir); err != nil {
		return nil, fail(err)
	}
	m, err := runKustomize(sb, dir)
	if err != nil {
		return nil, fail(err)
	}
	objs, err := finish(m, opts)
	if err != nil {
		return nil, fail(err)
	}
	return objs, nil
}

// buildDir resolves the build path inside the sandbox.
func buildDir(sb *sandboxFS, path string) (string, error) {
	if filepath.IsAbs(path) {
		return "", fmt.Errorf("path %s: %w; give it relative to the repository root", path, ErrAbsolutePath)
	}
	dir, err := resolve(sb.root, path, sb.links)
	if err != nil {
		return "", fmt.Errorf("path: %w", err)
	}
	if !sb.inner.IsDir(dir) {
		return "", fmt.Errorf("path %s is not a directory in the repository: %w", path, ErrNotFound)
	}
	return dir, nil
}

// runKustomize runs krusty with plugins, exec functions and helm off and
// turns a panic inside kustomize into an error.
func runKustomize(sb *sandboxFS, dir string) (m resmap.ResMap, err error) {
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	opts := krusty.MakeDefaultOptions()
	// The sandbox, not kustomize's per-kustomization rule, draws the line:
	// an overlay may use a shared patch from elsewhere in the repository.
	opts.LoadRestrictions = types.LoadRestrictionsNone
	opts.PluginConfig = types.DisabledPluginConfig()
	m, err = krusty.MakeKustomizer(opts).Run(sb, dir)
	return m, duplicateError(err)
}

var registeredID = regexp.MustCompile(`(?:from '([^']*)': )?may not add resource with an already registered id: ([^'\s]+)`)

// duplicateError rewrites kustomize's nested duplicate-id error into one
// that names the object and the file that repeats it.
func duplicateError(err error) error {
	if err == nil {
		return nil
	}
	m := registeredID.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if m[1] != "" {
		return fmt.Errorf("%w %s (again in %s)", ErrDuplicateObject, m[2], m[1])
	}
	return fmt.Errorf("%w %s", ErrDuplicateObject, m[2])
}
