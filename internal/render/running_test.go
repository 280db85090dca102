/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor is a safety net around a fact that comes true on another
// goroutine: the test decides on the fact, never on the timeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// quiet waits until no build of an earlier test still runs (their cleanups
// free the goroutines they left blocked).
func quiet(t *testing.T) {
	t.Helper()
	waitFor(t, "builds of earlier tests to end", func() bool { return gate.runningNow() == 0 })
}

func (b *blocker) released() bool {
	select {
	case <-b.release:
		return true
	default:
		return false
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// readResults records what every file read of a build returned.
type readResults struct {
	mu   sync.Mutex
	errs map[string][]error
}

func (r *readResults) hook(p string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.errs == nil {
		r.errs = map[string][]error{}
	}
	r.errs[filepath.Base(p)] = append(r.errs[filepath.Base(p)], err)
}

// only returns the results of the reads of the file named base.
func (r *readResults) only(base string) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs[base]...)
}

func manyConfigMaps(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  k: v\n", i)
	}
	return b.String()
}

func jsonList(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"}}`, i)
	}
	return `{"apiVersion":"v1","kind":"List","items":[` + strings.Join(items, ",") + "]}"
}

// TestManyObjectsAreRefusedBeforeKustomizeParsesThem: a file with more
// objects than the limit, however written, is refused at the read that
// would hand it to kustomize (whose handling of many objects does no file
// operation and grows with their square: 12,000 ConfigMaps in 0.7 MB ran
// for minutes after the deadline), and nothing of the build is left
// running when Build returns.
func TestManyObjectsAreRefusedBeforeKustomizeParsesThem(t *testing.T) {
	var nested strings.Builder
	nested.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range 120 {
		fmt.Fprintf(&nested, "- kind: ConfigMapList\n  items:\n")
		for j := range 100 {
			fmt.Fprintf(&nested, "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm-%d-%d}}\n", i, j)
		}
	}
	var generators strings.Builder
	generators.WriteString("configMapGenerator:\n")
	for i := range 3000 {
		fmt.Fprintf(&generators, "- name: cm-%d\n  literals: [k=v]\n", i)
	}
	tests := []struct {
		name, file, content string
	}{
		{name: "12,000 ConfigMaps", file: "many.yaml", content: manyConfigMaps(12000)},
		{name: "a List of 12,000 in one line of JSON", file: "many.yaml", content: jsonList(12000)},
		{name: "Lists in a List", file: "many.yaml", content: nested.String()},
		{name: "3,000 generated ConfigMaps", file: "kustomization.yaml", content: generators.String()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"app/kustomization.yaml": kustomization("many.yaml"), "app/many.yaml": tc.content}
			if tc.file == "kustomization.yaml" {
				files = map[string]string{"app/kustomization.yaml": tc.content}
			}
			root := writeTree(t, files)
			quiet(t)
			goroutines := runtime.NumGoroutine()
			var reads readResults
			objs, err := Build(root, "app", Options{readDone: reads.hook})
			assert.Nil(t, objs)
			var le *LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, LimitObjects, le.Limit)
			assert.Equal(t, int64(DefaultMaxObjects), le.Max)
			t.Log(err)

			// kustomize asked for the file and got the limit instead of it.
			got := reads.only(tc.file)
			require.NotEmpty(t, got, "kustomize read %s", tc.file)
			for _, err := range got {
				require.ErrorAs(t, err, &le)
				assert.Equal(t, LimitObjects, le.Limit)
			}
			// The build's goroutine gave back its place before Build
			// returned, and no goroutine of it is left.
			assert.Zero(t, gate.runningNow())
			waitFor(t, "the build's goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
		})
	}

	// Within the limit, the same shapes render.
	root := writeTree(t, map[string]string{"app/kustomization.yaml": kustomization("a.yaml", "b.yaml"),
		"app/a.yaml": manyConfigMaps(50), "app/b.yaml": strings.ReplaceAll(jsonList(50), "cm-", "json-")})
	objs, err := Build(root, "app", Options{})
	require.NoError(t, err)
	assert.Len(t, objs, 100)
}

// TestYAMLNodeLimit: what kustomize's memory grows with is bounded before
// it parses a file; a generator's data file only counts as text.
func TestYAMLNodeLimit(t *testing.T) {
	flow := "[" + strings.TrimSuffix(strings.Repeat("0,", 20000), ",") + "]"
	data := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\nx: " + flow + "\n"
	opts := Options{Limits: Limits{MaxNodes: 30000}}

	var reads readResults
	opts.readDone = reads.hook
	_, err := Build(writeTree(t, map[string]string{"app/kustomization.yaml": kustomization("big.yaml"), "app/big.yaml": data}), "app", opts)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitNodes, le.Limit)
	assert.Contains(t, err.Error(), "more than 30000 YAML nodes read")
	for _, err := range reads.only("big.yaml") {
		require.ErrorAs(t, err, &le, "kustomize never got the file")
	}

	// The same bytes as a generator's file are one string.
	gen := "configMapGenerator:\n- name: data\n  files: [big.json]\n"
	objs, err := Build(writeTree(t, map[string]string{"app/kustomization.yaml": gen, "app/big.json": flow}), "app", opts)
	require.NoError(t, err)
	assert.Len(t, objs, 1)

	// Unless the build also reads it as YAML.
	both := gen + "resources: [big.yaml]\n"
	_, err = Build(writeTree(t, map[string]string{"app/kustomization.yaml": both, "app/big.yaml": data, "app/big.json": "-> big.yaml"}), "app", opts)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitNodes, le.Limit)
}

// TestAliasCycleIsRefused: an alias inside the node its anchor names makes
// kustomize recurse until the stack overflows, which kills the process (no
// recover catches it); the sandbox refuses the file, and a patch string
// that holds one, before kustomize reads it.
func TestAliasCycleIsRefused(t *testing.T) {
	cycle := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: &l {a: *l}\n"
	tests := map[string]map[string]string{
		"in a resource": {"app/kustomization.yaml": kustomization("cm.yaml"), "app/cm.yaml": cycle},
		"in an inline patch": {
			"app/kustomization.yaml": kustomization("cm.yaml") + "patches:\n- patch: |\n" +
				"    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: app-config\n    data: &l {a: *l}\n",
			"app/cm.yaml": configMap,
		},
	}
	for name, files := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Build(writeTree(t, files), "app", Options{})
			require.ErrorIs(t, err, ErrAliasCycle)
			t.Log(err)
		})
	}
}

// TestSchemaBuildRefusesRemoteBases: a build that sets kustomize's schema
// runs alone, so it may not wait on a fetch that no file operation
// interrupts; it is refused before anything is fetched.
func TestSchemaBuildRefusesRemoteBases(t *testing.T) {
	root := openAPITree(t, true)
	k := filepath.Join(root, "app", "kustomization.yaml")
	writeFile(t, k, kustomization("deploy.yaml", "https://example.invalid/remote.yaml")+"openapi:\n  path: schema.json\n")
	_, err := Build(root, "app", Options{AllowRemoteBases: true})
	require.ErrorIs(t, err, ErrRemoteInSchemaBuild)
	assert.Contains(t, err.Error(), "https://example.invalid/remote.yaml")
	t.Log(err)
}

// TestAbandonedSchemaBuildLeavesTheGateAtItsDeadline: a build that sets
// kustomize's schema and overruns its deadline inside a file operation (a
// hook holds it there) lets other builds in from its deadline on, with the
// default schema back; its goroutine, once free, unwinds without changing
// the schema again. The deadline is long enough for the build to reach kustomize under the
// race detector on a loaded machine (300 ms was not, once).
func TestAbandonedSchemaBuildLeavesTheGateAtItsDeadline(t *testing.T) {
	quiet(t)
	stuck := newBlocker(t, "app/deploy.yaml")
	_, err := Build(openAPITree(t, true), "app", Options{readHook: stuck.hook, Limits: Limits{Timeout: 2 * time.Second}})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitTime, le.Limit)
	assert.False(t, le.Waiting, "it ran, with its schema set, and overran")
	require.False(t, stuck.released(), "its goroutine is still inside kustomize")
	assert.Equal(t, 1, gate.runningNow(), "and keeps its place among the running ones")

	// Builds after its deadline are not kept waiting for it: a shared one,
	// one with its own schema, and one with the default schema again.
	later := Options{Limits: Limits{Timeout: time.Minute}}
	objs, err := Build(simpleTree(t, nil), "app", later)
	require.NoError(t, err, "a shared build")
	assert.Len(t, objs, 1)
	objs, err = Build(openAPITree(t, true), "app", later)
	require.NoError(t, err, "another build that sets the schema")
	assert.Equal(t, []string{"b"}, containerNames(t, objs))
	objs, err = Build(openAPITree(t, false), "app", later)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, containerNames(t, objs), "the default schema is back")
	require.False(t, stuck.released())

	// Freed, the abandoned goroutine unwinds and gives its place back,
	// and the schema stays the default.
	stuck.unblock()
	waitFor(t, "the abandoned build to end", func() bool { return gate.runningNow() == 0 })
	objs, err = Build(openAPITree(t, false), "app", later)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, containerNames(t, objs))
}

// withSlots sets how many kustomize goroutines may run at once for one
// test.
func withSlots(t *testing.T, n int) {
	t.Helper()
	quiet(t)
	gate.mu.Lock()
	old := gate.slots
	gate.slots = n
	gate.mu.Unlock()
	t.Cleanup(func() {
		gate.mu.Lock()
		gate.slots = old
		gate.opened()
		gate.mu.Unlock()
	})
}

// TestRunningBuildsAreBounded: at most slots kustomize goroutines run at
// once; the next build waits for a place within its own deadline and fails
// as Waiting, without starting kustomize.
func TestRunningBuildsAreBounded(t *testing.T) {
	withSlots(t, 2)
	var blocked [2]*blocker
	var running [2]*asyncBuild
	for i := range blocked {
		blocked[i] = newBlocker(t, "app/cm.yaml")
		running[i] = buildAsync(simpleTree(t, nil), "app", Options{readHook: blocked[i].hook, Limits: Limits{Timeout: -1}})
		mustWait(t, blocked[i].blocked, fmt.Sprintf("build %d blocking inside kustomize", i))
	}
	assert.Equal(t, 2, gate.runningNow())

	var reads atomic.Int64
	var waited atomic.Bool
	_, err := Build(simpleTree(t, nil), "app", Options{
		readHook: func(string) { reads.Add(1) },
		gateHook: func() { waited.Store(true) },
		Limits:   Limits{Timeout: 300 * time.Millisecond},
	})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitTime, le.Limit)
	assert.True(t, le.Waiting, "it waited for a place")
	assert.Contains(t, err.Error(), "at most 2 run at once")
	assert.True(t, waited.Load())
	assert.Equal(t, int64(1), reads.Load(), "only the preflight's read of its kustomization: kustomize never ran")
	for i := range running {
		assert.False(t, running[i].finished(), "build %d still blocked", i)
	}

	// A place frees when a running build returns.
	blocked[0].unblock()
	require.NoError(t, running[0].wait(t, "build 0").err)
	objs, err := Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: time.Minute}})
	require.NoError(t, err)
	assert.Len(t, objs, 1)
	blocked[1].unblock()
	require.NoError(t, running[1].wait(t, "build 1").err)
	assert.Zero(t, gate.runningNow())
}

// TestAbandonedBuildKeepsItsPlace: a build past its deadline keeps its
// place until its kustomize goroutine really returns, so overrunning builds
// (a retry, the next poll) cannot pile up.
func TestAbandonedBuildKeepsItsPlace(t *testing.T) {
	withSlots(t, 1)
	stuck := newBlocker(t, "app/cm.yaml")
	_, err := Build(simpleTree(t, nil), "app", Options{readHook: stuck.hook, Limits: Limits{Timeout: 200 * time.Millisecond}})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.False(t, le.Waiting, "its own deadline")
	assert.Equal(t, 1, gate.runningNow(), "its goroutine still holds the place")

	_, err = Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: 300 * time.Millisecond}})
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Waiting, "the next build waits for the abandoned one")

	stuck.unblock()
	waitFor(t, "the abandoned build to end", func() bool { return gate.runningNow() == 0 })
	objs, err := Build(simpleTree(t, nil), "app", Options{Limits: Limits{Timeout: time.Minute}})
	require.NoError(t, err)
	assert.Len(t, objs, 1)
}
