/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"time"

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
	// namespace of the GitRepository). A tenant's builds take at most one
	// of the places among the running builds at once, abandoned ones
	// included (running.go): one tenant's slow builds cannot keep every
	// other tenant's waiting; its own next build waits instead.
	Tenant string

	// Limits of the build (see doc.go).
	Limits

	// readHook, for tests, is called before every file read.
	readHook func(path string)
	// readDone, for tests, is called with what every file read kustomize
	// makes returns to it.
	readDone func(path string, err error)
	// gateHook, for tests, is called when the build starts waiting for
	// other builds (running.go, schema.go).
	gateHook func()
}

// Limits of a build: zero means the default, a negative value means no
// limit. A build over a limit fails with a *LimitError (errors.Is
// ErrLimitExceeded).
type Limits struct {
	// Timeout bounds the build's wall-clock time, waiting included:
	// Build returns at the deadline, and a build still running inside
	// kustomize fails at its next file operation.
	Timeout time.Duration
	// MaxFileReads bounds the number of file reads; a file read n times
	// (a base included n times) counts n times.
	MaxFileReads int
	// MaxBytes bounds the bytes of all file reads, counted the same way.
	MaxBytes int64
	// MaxObjects bounds the number of objects: every document kustomize
	// reads (resources, items of Lists, patches, plugin configs) and every
	// ConfigMap and Secret a kustomization generates, counted as the files
	// are read and before kustomize parses them, and the objects rendered.
	MaxObjects int
	// MaxNodes bounds the YAML nodes of the files read (estimated before
	// they are parsed; long text counts one per 64 bytes), which is what
	// kustomize's memory grows with.
	MaxNodes int64
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

// build renders path inside the sandbox; aliases are other spellings of the
// root stripped from error messages.
//
// kustomize runs on its own goroutine so that the caller returns at the
// deadline even when kustomize is stuck where the sandbox cannot see it (an
// HTTP fetch of a remote base, a git clone) or computes without a file
// operation. That goroutine fails at its next file operation, and keeps
// its place among the running ones (running.go) until kustomize returns;
// past the deadline it leaves the schema gate at its next file operation
// (schema.go).
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
	if pf.openAPI && opts.AllowRemoteBases {
		// A build that sets the schema holds the gate alone; a remote
		// fetch could hold it past the deadline, with no file operation
		// to stop at. Check again as if remote bases were off.
		pf = &preflight{fs: sb, schemaBuild: true, allowFile: opts.AllowFileURLs, seen: map[string]bool{}}
		if err := pf.dir(dir); err != nil {
			return nil, fail(sb.budget.cause(err))
		}
	} else if opts.AllowRemoteBases {
		sb.allowClones()
	}
	sb.exclusive = pf.openAPI
	sb.dataOnly = pf.dataOnly()
	run := &buildRun{ctx: ctx, tenant: opts.Tenant}
	sb.run = run

	type result struct {
		objs []*unstructured.Unstructured
		err  error
	}
	done := make(chan result, 1)
	var started atomic.Bool // past the waits: a deadline is then the build's own
	go func() {
		var r result
		defer func() { done <- r }()
		defer sb.releaseClones()
		r.err = run.run(sb.exclusive, opts.gateHook, func() { started.Store(true) }, func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("kustomize panicked: %v", p)
				}
			}()
			if err := pf.checkConfigs(); err != nil {
				return err
			}
			sb.budget.fan.repl.seal()
			m, err := runKustomize(sb, dir)
			if err != nil {
				return err
			}
			if err := sb.budget.objects(m.Size()); err != nil {
				return err
			}
			// finish reads kustomize's schema too (scopes), so it stays
			// inside the gate.
			r.objs, err = finish(m, opts)
			return err
		})
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done:
		default:
			r = result{err: ctx.Err()}
		}
	}
	if r.err != nil {
		if errors.Is(r.err, context.DeadlineExceeded) && !started.Load() {
			return nil, fail(&LimitError{Limit: LimitTime, Max: int64(lim.timeout), Waiting: true})
		}
		if refused := sb.firstRefusal(); refused != nil && sb.budget.hit.Load() == nil {
			return nil, fail(refused)
		}
		return nil, fail(sb.budget.cause(r.err))
	}
	return r.objs, nil
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
