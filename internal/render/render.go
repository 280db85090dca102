/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// render.go: Options, Build, BuildContext and BuildYAML — kustomize run on its
// own goroutine while holding kustomizeSlot — and Warm.

package render

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// Options of a build.
type Options struct {
	// AllowRemoteBases lets kustomizations name remote bases and resources
	// (Git URLs, HTTP files). Off by default: a build then touches nothing
	// but the repository.
	AllowRemoteBases bool
	// AllowFileURLs lets remote bases be file:// Git URLs (a local or test
	// setup): they clone any repository on the controller's disk, other
	// tenants' checkouts included. Only with AllowRemoteBases.
	AllowFileURLs bool
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
	// Tenant, when set, names whose build this is (a reconciler passes the
	// namespace of the GitRepository). Build does not use it;
	// internal/worker.Pool does, to run at most one build of a tenant at a
	// time, so that one tenant's slow builds cannot take every worker.
	Tenant string

	// Limits of the build (see doc.go).
	Limits

	// readHook, for tests, is called before every file read.
	readHook func(path string)
}

// Limits of a build: zero means the default, a negative value means no
// limit. A build over a limit fails with a *LimitError (errors.Is
// ErrLimitExceeded).
type Limits struct {
	// Timeout bounds the build's wall-clock time, waiting for a free
	// build slot included: Build returns at the deadline, and a build
	// still running inside kustomize fails at its next file operation.
	Timeout time.Duration
	// MaxFileReads bounds the number of file reads; a file read n times
	// (a base included n times) counts n times.
	MaxFileReads int
	// MaxBytes bounds the bytes of all file reads, counted the same way.
	MaxBytes int64
	// MaxObjects bounds the number of objects the build renders.
	MaxObjects int
}

// Build runs kustomize in-process on the directory path inside root (a
// checkout) and returns the objects, stamped and sorted deterministically.
func Build(root, path string, opts Options) ([]*unstructured.Unstructured, error) {
	return BuildContext(context.Background(), root, path, opts)
}

// BuildContext is Build that also ends when ctx does.
func BuildContext(ctx context.Context, root, path string, opts Options) ([]*unstructured.Unstructured, error) {
	sb, err := newDiskSandbox(root)
	if err != nil {
		return nil, &BuildError{Path: path, Err: err}
	}
	return build(ctx, sb, path, opts, root)
}

// BuildYAML is Build rendered as multi-document YAML.
func BuildYAML(root, path string, opts Options) ([]byte, error) {
	objs, err := Build(root, path, opts)
	if err != nil {
		return nil, err
	}
	return EncodeYAML(objs)
}

// kustomizeSlot lets one kustomize goroutine run in the process at a
// time, held until kustomize really returns, a build abandoned at its
// deadline included. kyaml keeps one OpenAPI schema per process: krusty
// sets it on every run, a kustomization's openapi field replaces it, and
// kyaml parses it lazily into plain maps that a concurrent build would
// read while they are written (a fatal error, not a panic). The
// controller on Linux runs every build in a worker process of its own
// (internal/worker), so this only serialises the CLI's builds and those
// of a controller off Linux.
var kustomizeSlot = make(chan struct{}, 1)

// build renders path inside the sandbox; aliases are other spellings of the
// root stripped from error messages.
//
// kustomize runs on its own goroutine so that the caller returns at the
// deadline even when kustomize is stuck where the sandbox cannot see it (an
// HTTP fetch of a remote base, a git clone) or computes without a file
// operation. That goroutine fails at its next file operation and keeps
// kustomizeSlot until kustomize returns; a build that cannot take the slot
// before its deadline fails with a LimitError that is Waiting.
func build(ctx context.Context, sb *sandboxFS, path string, opts Options, aliases ...string) ([]*unstructured.Unstructured, error) {
	fail := func(err error) error {
		return &BuildError{Path: path, Err: err, root: append([]string{sb.root}, aliases...)}
	}
	lim := limitsOf(opts)
	if lim.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.timeout)
		defer cancel()
	}
	sb.budget = newBudget(ctx, lim)
	sb.allowFileURLs = opts.AllowFileURLs
	dir, err := buildDir(sb, path)
	if err != nil {
		return nil, fail(err)
	}
	pf := &preflight{fs: sb, allowRemote: opts.AllowRemoteBases, allowFile: opts.AllowFileURLs, seen: map[string]bool{}}
	if err := pf.dir(dir); err != nil {
		return nil, fail(sb.budget.cause(err))
	}
	if opts.AllowRemoteBases {
		sb.allowClones()
	}

	select {
	case kustomizeSlot <- struct{}{}:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fail(&LimitError{Limit: LimitTime, Max: int64(lim.timeout), Waiting: true})
		}
		return nil, fail(sb.budget.cause(ctx.Err()))
	}
	objs, err := runHoldingSlot(ctx, sb, pf, dir, opts)
	if err != nil {
		if refused := sb.firstRefusal(); refused != nil && sb.budget.hit.Load() == nil {
			return nil, fail(refused)
		}
		return nil, fail(sb.budget.cause(err))
	}
	return objs, nil
}

// runHoldingSlot runs kustomize, holding kustomizeSlot, which it frees
// when kustomize returns; it returns when kustomize did or ctx ended,
// whichever is first.
func runHoldingSlot(ctx context.Context, sb *sandboxFS, pf *preflight, dir string, opts Options) ([]*unstructured.Unstructured, error) {
	type result struct {
		objs []*unstructured.Unstructured
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() { done <- r }()
		defer func() { <-kustomizeSlot }()
		defer sb.releaseClones()
		if pf.openAPI {
			// Before the slot is free, so that the next build starts
			// from the default schema, whatever this one left.
			defer defaultSchema()
			defaultSchema()
		}
		r.objs, r.err = kustomize(sb, pf, dir, opts)
	}()
	select {
	case r := <-done:
		return r.objs, r.err
	case <-ctx.Done():
		select {
		case r := <-done:
			return r.objs, r.err
		default:
			return nil, ctx.Err()
		}
	}
}

// defaultSchema puts kyaml's default schema back, parsed. A custom schema
// is parsed on top of what kyaml holds, so a build that sets one starts
// from this too: kyaml would otherwise parse the default after the custom
// one, over it, when an earlier build only asked it for a namespace scope
// (its "delayed" parse).
func defaultSchema() {
	openapi.ResetOpenAPI()
	_ = openapi.Schema()
}

// Warm parses kyaml's default schema ahead of a build (a worker waiting
// for its request does), so that the build does not wait for it, and runs
// one small build in memory: kustomize's own lazy start-up (its builtin
// field specs, the plugin factories) then costs a build nothing either.
func Warm() {
	_ = openapi.Schema()
	_ = warmBuild()
}

func warmBuild() error {
	fs := filesys.MakeFsInMemory()
	for name, text := range warmTree {
		if err := fs.WriteFile(name, []byte(text)); err != nil {
			return err
		}
	}
	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = types.DisabledPluginConfig()
	_, err := krusty.MakeKustomizer(opts).Run(fs, "/app")
	return err
}

// warmTree is the build Warm runs: an overlay with the common
// transformers.
var warmTree = map[string]string{
	"/base/kustomization.yaml": "resources: [cm.yaml]\n",
	"/base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: warm}\ndata: {a: b}\n",
	"/app/kustomization.yaml": "resources: [../base]\nnamePrefix: p-\nnamespace: ns\nlabels: [{pairs: {a: b}}]\n" +
		"patches: [{patch: '{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"warm\"}, \"data\": {\"c\": \"d\"}}'}]\n",
}

// kustomize is what a build does holding kustomizeSlot: it checks the
// plugin configs (which may run kustomize), runs kustomize, and finishes
// the objects (which reads kyaml's schema, for scopes).
func kustomize(sb *sandboxFS, pf *preflight, dir string, opts Options) (objs []*unstructured.Unstructured, err error) {
	defer func() {
		if p := recover(); p != nil {
			objs, err = nil, fmt.Errorf("kustomize panicked: %v", p)
		}
	}()
	if err := pf.checkConfigs(); err != nil {
		return nil, err
	}
	m, err := runKustomize(sb, dir)
	if err != nil {
		return nil, err
	}
	if err := sb.budget.objects(m.Size()); err != nil {
		return nil, err
	}
	return finish(m, opts)
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
	return m, noGitError(duplicateError(err))
}

// noGitError names what to do when kustomize found no git to clone a
// remote base with.
func noGitError(err error) error {
	if err != nil && strings.Contains(err.Error(), "no 'git' program on path") {
		return fmt.Errorf("%w: %w", ErrNoGit, err)
	}
	return err
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
