/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// blocker is a read hook that stops the build reading a file whose path
// ends in suffix until release is closed; blocked is closed when it does.
type blocker struct {
	suffix  string
	blocked chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlocker(t *testing.T, suffix string) *blocker {
	b := &blocker{suffix: suffix, blocked: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(b.unblock)
	return b
}

func (b *blocker) hook(p string) {
	if strings.HasSuffix(p, b.suffix) {
		b.once.Do(func() { close(b.blocked) })
		<-b.release
	}
}

func (b *blocker) unblock() {
	select {
	case <-b.release:
	default:
		close(b.release)
	}
}

// idle waits until no build of an earlier test holds the process's
// kustomize slot (their cleanups free the goroutines they left blocked), so
// that a short deadline is spent on this test's build, not waiting.
func idle(t *testing.T) {
	t.Helper()
	select {
	case kustomizeSlot <- struct{}{}:
		<-kustomizeSlot
	case <-time.After(2 * time.Minute):
		t.Fatal("builds of earlier tests did not end")
	}
}

// asyncBuild is a build running on its own goroutine.
type asyncBuild struct {
	done chan struct{}
	objs []*unstructuredT
	err  error
}

func buildAsync(root, path string, opts Options) *asyncBuild {
	a := &asyncBuild{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.objs, a.err = Build(root, path, opts)
	}()
	return a
}

func (a *asyncBuild) wait(t *testing.T, what string) *asyncBuild {
	t.Helper()
	mustWait(t, a.done, what)
	return a
}

// mustWait is a safety net so that a regression fails instead of hanging
// the suite; the tests decide on facts, never on this timeout.
func mustWait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not happen", what)
		panic("unreachable")
	}
}

func simpleTree(t *testing.T, extra map[string]string) string {
	files := map[string]string{
		"app/kustomization.yaml": kustomization("cm.yaml"),
		"app/cm.yaml":            configMap,
	}
	for k, v := range extra {
		files[k] = v
	}
	return writeTree(t, files)
}

// TestBuildWaitsForTheRunningKustomize: while a build is inside kustomize
// (here on a file read a test hook holds), another build of the process
// waits for it; at its own deadline it fails as Waiting, without having
// started kustomize, and once the first returns the next build runs.
func TestBuildWaitsForTheRunningKustomize(t *testing.T) {
	stuck := newBlocker(t, "app/cm.yaml")
	a := buildAsync(simpleTree(t, nil), "app", Options{readHook: stuck.hook, Limits: Limits{Timeout: -1}})
	mustWait(t, stuck.blocked, "build A blocking inside kustomize")

	var reads atomic.Int64
	_, err := Build(simpleTree(t, nil), "app", Options{
		readHook: func(string) { reads.Add(1) },
		Limits:   Limits{Timeout: 300 * time.Millisecond},
	})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitTime, le.Limit)
	assert.True(t, le.Waiting, "it ran out of time waiting, not working")
	assert.Contains(t, err.Error(), "time limit of 300ms reached while waiting for a free build slot")
	assert.Contains(t, err.Error(), "a later attempt may succeed")
	assert.Equal(t, int64(1), reads.Load(), "only the preflight's read of its kustomization: kustomize never ran")

	stuck.unblock()
	require.NoError(t, a.wait(t, "build A").err)
	assert.Len(t, a.objs, 1)
	objs, err := Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: time.Minute}})
	require.NoError(t, err, "the next build runs")
	assert.Len(t, objs, 1)
}

// TestBuildReturnsAtItsDeadline: a build stuck where nothing can interrupt
// it returns at its deadline with the time limit named.
func TestBuildReturnsAtItsDeadline(t *testing.T) {
	idle(t)
	stuck := newBlocker(t, "app/cm.yaml")
	root := simpleTree(t, nil)
	_, err := Build(root, "app", Options{readHook: stuck.hook, Limits: Limits{Timeout: 200 * time.Millisecond}})
	require.ErrorIs(t, err, ErrLimitExceeded)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitTime, le.Limit)
	assert.False(t, le.Waiting)
	assert.Contains(t, err.Error(), "the build took longer than the time limit of 200ms")
	assert.NotContains(t, err.Error(), root)
	assert.Len(t, kustomizeSlot, 1, "its goroutine is still inside kustomize, holding the slot")
}

// openAPITree is a kustomization with a custom OpenAPI schema in which a
// Deployment's containers have no merge key, so a strategic-merge patch
// replaces the list instead of merging by name.
func openAPITree(t *testing.T, withSchema bool) string {
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n        - name: a\n          image: a\n"
	patch := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n        - name: b\n          image: b\n"
	k := kustomization("deploy.yaml") + "patches:\n  - path: patch.yaml\n"
	files := map[string]string{"app/deploy.yaml": deploy, "app/patch.yaml": patch}
	if withSchema {
		k += "openapi:\n  path: schema.json\n"
		files["app/schema.json"] = `{"definitions": {"io.k8s.api.apps.v1.Deployment": {"type": "object",
  "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}],
  "properties": {"spec": {"type": "object"}}}}}`
	}
	files["app/kustomization.yaml"] = k
	return writeTree(t, files)
}

func containerNames(t *testing.T, objs []*unstructuredT) []string {
	t.Helper()
	require.Len(t, objs, 1)
	cs, _, err := unstructured.NestedSlice(objs[0].Object, "spec", "template", "spec", "containers")
	require.NoError(t, err)
	var names []string
	for _, c := range cs {
		names = append(names, fmt.Sprint(c.(map[string]any)["name"]))
	}
	return names
}

// TestOpenAPISchemaDoesNotOutliveItsBuild: a kustomization's custom schema
// applies to its own build only; the next build merges with the default
// Kubernetes schema again.
func TestOpenAPISchemaDoesNotOutliveItsBuild(t *testing.T) {
	objs, err := Build(openAPITree(t, true), "app", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, containerNames(t, objs), "the custom schema has no merge key")

	objs, err = Build(openAPITree(t, false), "app", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, containerNames(t, objs), "default schema: merged by name")
}

// TestInvalidOpenAPISchemaFailsOnlyItsBuild: kyaml panics on a custom
// schema it cannot parse, with its process-wide schema half set; the build
// fails and the next one renders with the default schema.
func TestInvalidOpenAPISchemaFailsOnlyItsBuild(t *testing.T) {
	root := openAPITree(t, true)
	require.NoError(t, os.WriteFile(filepath.Join(root, "app", "schema.json"), []byte(`{"definitions": 7}`), 0o644))
	_, err := Build(root, "app", Options{})
	require.Error(t, err)
	t.Log(err)
	objs, err := Build(openAPITree(t, false), "app", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, containerNames(t, objs))
}

// TestAbandonedBuildHoldsTheSlotUntilKustomizeReturns: a build that
// overran its deadline inside kustomize, with its own schema set, keeps the
// process's kustomize slot until its goroutine really returns (builds
// after it wait, and fail as Waiting at their deadline), and the build
// after it renders with the default schema.
func TestAbandonedBuildHoldsTheSlotUntilKustomizeReturns(t *testing.T) {
	// The deadline is long enough for the build to reach kustomize under
	// the race detector on a loaded machine.
	idle(t)
	stuck := newBlocker(t, "app/deploy.yaml")
	_, err := Build(openAPITree(t, true), "app", Options{readHook: stuck.hook, Limits: Limits{Timeout: 2 * time.Second}})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitTime, le.Limit)
	assert.False(t, le.Waiting, "it ran, with its schema set, and overran")
	require.Len(t, kustomizeSlot, 1, "its goroutine is still inside kustomize, holding the slot")

	_, err = Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: 300 * time.Millisecond}})
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Waiting, "the next build waits for the abandoned one")

	stuck.unblock()
	objs, err := Build(openAPITree(t, false), "app", Options{Limits: Limits{Timeout: time.Minute}})
	require.NoError(t, err, "the slot is free once the abandoned goroutine returns")
	assert.Equal(t, []string{"b", "a"}, containerNames(t, objs), "the default schema is back")
}

// TestSandboxStopsAtTheDeadline: past its deadline, every file operation of
// a build fails with the time limit, so a build that overran stops at its
// next one wherever it is in kustomize.
func TestSandboxStopsAtTheDeadline(t *testing.T) {
	root := simpleTree(t, nil)
	sb, err := newDiskSandbox(root)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	sb.budget = newBudget(ctx, limits{timeout: time.Second})
	app := filepath.Join(sb.root, "app")
	_, err = sb.ReadFile(filepath.Join(app, "cm.yaml"))
	require.ErrorIs(t, err, ErrLimitExceeded)
	_, err = sb.ReadDir(app)
	require.ErrorIs(t, err, ErrLimitExceeded)
	_, _, err = sb.CleanedAbs(app)
	require.ErrorIs(t, err, ErrLimitExceeded)
	assert.False(t, sb.Exists(app))
	assert.False(t, sb.IsDir(app))
	_, err = runKustomize(sb, app)
	require.ErrorIs(t, err, ErrLimitExceeded)
}

// TestHangingURLWithRemoteBasesOn: with remote bases on, a URL that never
// answers does not keep its caller past the deadline; the build's
// goroutine keeps the process's kustomize slot until the fetch returns.
func TestHangingURLWithRemoteBasesOn(t *testing.T) {
	requested := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requested <- struct{}{}
		<-release
	}))
	t.Cleanup(srv.Close)
	var once sync.Once
	answer := func() { once.Do(func() { close(release) }) }
	t.Cleanup(answer)
	root := writeTree(t, map[string]string{"app/kustomization.yaml": kustomization(srv.URL + "/hang.yaml")})

	// The deadline is long enough for kustomize to reach the fetch on a
	// loaded machine.
	idle(t)
	a := buildAsync(root, "app", Options{AllowRemoteBases: true, Limits: Limits{Timeout: 2 * time.Second}})
	mustWait(t, requested, "the request of build A")
	a.wait(t, "build A")
	var le *LimitError
	require.ErrorAs(t, a.err, &le)
	assert.Equal(t, LimitTime, le.Limit)
	assert.False(t, le.Waiting)

	_, err := Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: 300 * time.Millisecond}})
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Waiting, "build A's fetch still holds the slot")

	answer()
	objs, err := Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: time.Minute}})
	require.NoError(t, err, "the slot is free once the fetch returned")
	assert.Len(t, objs, 1)
}

// exponentialTree writes a chain of levels kustomizations, each including
// the previous one twice (under two name prefixes): 2^levels objects from
// 3*levels+2 small files.
func exponentialTree(t testing.TB, levels int) string {
	files := map[string]string{
		"l0/kustomization.yaml": kustomization("cm.yaml"),
		"l0/cm.yaml":            configMap,
	}
	for i := 1; i <= levels; i++ {
		prev := fmt.Sprintf("../../l%d", i-1)
		files[fmt.Sprintf("l%d/a/kustomization.yaml", i)] = "namePrefix: a-\n" + kustomization(prev)
		files[fmt.Sprintf("l%d/b/kustomization.yaml", i)] = "namePrefix: b-\n" + kustomization(prev)
		files[fmt.Sprintf("l%d/kustomization.yaml", i)] = kustomization("a", "b")
	}
	return writeTree(t, files)
}

// TestExponentialKustomizationIsRefused: 38 files that would render 4,096
// objects are refused by the default limits, with the limit named.
func TestExponentialKustomizationIsRefused(t *testing.T) {
	root := exponentialTree(t, 12)
	objs, err := Build(root, "l12", Options{})
	require.ErrorIs(t, err, ErrLimitExceeded)
	assert.Nil(t, objs)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitFileReads, le.Limit)
	assert.Contains(t, err.Error(), fmt.Sprintf("more than %d file reads (a base included n times is read n times)", DefaultMaxFileReads))
	t.Log(err)

	// Within the limits, the same shape renders.
	objs, err = Build(exponentialTree(t, 4), "l4", Options{})
	require.NoError(t, err)
	assert.Len(t, objs, 16)
}

func TestLimits(t *testing.T) {
	big := strings.Replace(configMap, "value", strings.Repeat("x", 100<<10), 1)
	tests := []struct {
		name  string
		files map[string]string
		opts  Options
		limit string
		msg   string
	}{{
		name:  "objects",
		files: map[string]string{"app/kustomization.yaml": kustomization("a.yaml", "b.yaml"), "app/a.yaml": configMap, "app/b.yaml": strings.Replace(configMap, "app-config", "other", 1)},
		opts:  Options{Limits: Limits{MaxObjects: 1}},
		limit: LimitObjects,
		msg:   "render limit exceeded: more than 1 objects rendered",
	}, {
		name:  "bytes",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml"), "app/cm.yaml": big},
		opts:  Options{Limits: Limits{MaxBytes: 64 << 10}},
		limit: LimitBytes,
		msg:   "render limit exceeded: more than 64 KiB read",
	}, {
		name:  "file reads",
		files: map[string]string{"app/kustomization.yaml": kustomization("cm.yaml"), "app/cm.yaml": configMap},
		opts:  Options{Limits: Limits{MaxFileReads: 2}},
		limit: LimitFileReads,
		msg:   "render limit exceeded: more than 2 file reads",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			objs, err := Build(root, "app", tc.opts)
			require.ErrorIs(t, err, ErrLimitExceeded)
			assert.Nil(t, objs)
			var le *LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.limit, le.Limit)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "ask the cluster administrator to raise the limit")

			// A negative limit is no limit.
			_, err = Build(root, "app", Options{Limits: Limits{MaxObjects: -1, MaxBytes: -1, MaxFileReads: -1, Timeout: -1}})
			require.NoError(t, err)
		})
	}
}

// TestHugeFileIsNotRead: a file larger than the byte budget is refused
// from its size, before anything is read into memory.
func TestHugeFileIsNotRead(t *testing.T) {
	root := writeTree(t, map[string]string{"app/kustomization.yaml": kustomization("zeros.yaml")})
	f, err := os.Create(filepath.Join(root, "app", "zeros.yaml"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(256<<20)) // sparse: nothing is written
	require.NoError(t, f.Close())
	_, err = Build(root, "app", Options{})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitBytes, le.Limit)
	assert.Contains(t, err.Error(), "more than 32 MiB read")
}

// TestBuildRefReadsOnlyWhatTheBuildReads: a large file elsewhere in the
// tree is never read from the object store, and one the build reads is
// charged before it is.
func TestBuildRefReadsOnlyWhatTheBuildReads(t *testing.T) {
	r := newGitRepo(t)
	require.NoError(t, r.write("app/kustomization.yaml", kustomization("cm.yaml")))
	require.NoError(t, r.write("app/cm.yaml", configMap))
	require.NoError(t, r.write("big/kustomization.yaml", kustomization("big.yaml")))
	require.NoError(t, r.write("big/big.yaml", strings.Replace(configMap, "value", strings.Repeat("x", 4<<20), 1)))
	r.commit("big file")

	objs, _, err := BuildRef(r.dir, "main", "app", Options{Limits: Limits{MaxBytes: 1 << 20}})
	require.NoError(t, err)
	assert.Len(t, objs, 1)

	_, _, err = BuildRef(r.dir, "main", "big", Options{Limits: Limits{MaxBytes: 1 << 20}})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitBytes, le.Limit)
}

// TestConcurrentBuilds: builds called concurrently (make race runs this
// under the race detector) each render exactly what they render alone;
// they take turns inside kustomize, within a deadline that has room for
// the wait.
func TestConcurrentBuilds(t *testing.T) {
	opts := goldenOpts
	opts.Timeout = 2 * time.Minute
	want := map[string][]byte{}
	for _, o := range []string{"staging", "production"} {
		b, err := BuildYAML(examples, "overlays/"+o, goldenOpts)
		require.NoError(t, err)
		want[o] = b
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := []string{"staging", "production"}[i%2]
			got, err := BuildYAML(examples, "overlays/"+o, opts)
			switch {
			case err != nil:
				errs <- err
			case string(got) != string(want[o]):
				errs <- fmt.Errorf("%s rendered differently under concurrency", o)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
