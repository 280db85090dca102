/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops get fbgd --watch`: a real transition followed, watches
// started again, only changes drawn.

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// watchFBGD is the FlinkBlueGreenDeployment of the --watch test, as a user
// keeps it in Git: the GitRepository stamps its revision.
const watchFBGD = `apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: job
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "10 min"
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "200ms"
    kubernetes.operator.bluegreen.deployment-deletion.delay: "1 s"
  template:
    spec:
      image: flink:1.20.0
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

// syncBuffer is the output of a command that runs in another goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// watchLines splits the output of --watch without a terminal into its
// lines, each without its timestamp, which must lead it.
func watchLines(t *testing.T, out string) []string {
	var ls []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		stamp, rest, ok := strings.Cut(l, " ")
		_, err := time.Parse(time.RFC3339, stamp)
		require.True(t, ok && err == nil, "a line without its timestamp: %q", l)
		ls = append(ls, rest)
	}
	return ls
}

// lineState is the state a line of --watch names; "" for a Warning's.
func lineState(line string) string {
	m := regexp.MustCompile(`^fbgd [^:]+: ([A-Z_]+),`).FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestGetFBGDWatch follows a real blue/green transition, pushed to Git,
// with `get fbgd --watch` writing to a pipe (no terminal): one timestamped
// line per change, never a tree.
//
// Which intermediate lines it prints is not deterministic: the watch
// coalesces the changes that arrive while it reads, and the simulated
// Flink operator and the controller race (a child's STABLE may land before
// or after the parent moves on). So the golden files hold the first line
// (before the push) and the last (the new colour active, the old one
// gone), and the states in between must only move forward in FLIP-503's
// order, each line differing from the one before. The tree of the end
// state, read once, is golden too.
func TestGetFBGDWatch(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	r := &prRepo{dir: t.TempDir(), t: t}
	r.git("init", "-q", "-b", "main")
	r.write("app/kustomization.yaml", "resources: [fbgd.yaml]\n")
	r.write("app/fbgd.yaml", watchFBGD)
	sha1 := r.commit("blue")
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "jobs", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	kc := []string{"-n", ns, "--kubeconfig", env.Kubeconfig}
	settled := func(color, sha string) func() bool {
		return func() bool {
			v, err := readFBGDView(context.Background(), env.Client, types.NamespacedName{Namespace: ns, Name: "job"})
			if err != nil {
				return false
			}
			st := v.Parent.Status
			ready := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition)
			return st.BlueGreenState == v1alpha1.BlueGreenState("ACTIVE_"+color) && st.JobStatus.State == v1alpha1.JobRunning &&
				st.ActiveJobState == "RUNNING" &&
				st.ActiveRevision == "main@sha1:"+sha && ready != nil && ready.Status == metav1.ConditionTrue &&
				len(v.Children) == 1 && treeChildStatus(v.Children[0]) == "STABLE/RUNNING" &&
				len(v.Events) > 0 && strings.Contains(v.Events[len(v.Events)-1].Message, " is active with main@sha1:"+sha)
		}
	}
	eventually(t, "blue active with the first commit, its event recorded", settled("BLUE", sha1))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	root := newRootCommand()
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetArgs(append([]string{"get", "fbgd", "job", "--watch"}, kc...))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	eventually(t, "the first line", func() bool { return strings.HasSuffix(out.String(), "\n") })

	r.replace("app/fbgd.yaml", "image: flink:1.20.0", "image: flink:1.20.1")
	sha2 := r.commit("green")
	res := runCLI(t, append([]string{"reconcile", "gitrepository", "jobs"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	eventually(t, "green active with the second commit, blue gone", settled("GREEN", sha2))

	m := masker{names: map[string]string{ns: "<ns>"}, shas: map[string]string{sha1: "<commit-1>", sha2: "<commit-2>"}}
	// The watch has caught up once its last line is the line of what the
	// cluster holds now.
	eventually(t, "the line of green active", func() bool {
		ls := watchLines(t, out.String())
		v, err := readFBGDView(context.Background(), env.Client, types.NamespacedName{Namespace: ns, Name: "job"})
		return err == nil && len(ls) > 1 && ls[len(ls)-1] == watchLine(v)
	})
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "Ctrl-C (a cancelled context) ends --watch without an error")
	case <-time.After(10 * time.Second):
		t.Fatal("--watch did not stop when its context ended")
	}
	assert.Empty(t, errOut.String())
	assert.NotContains(t, out.String(), "Name:", "no tree without a terminal")

	ls := watchLines(t, out.String())
	golden(t, filepath.Join("testdata", "get", "watch-first.golden"), m.mask(ls[0])+"\n")
	golden(t, filepath.Join("testdata", "get", "watch-last.golden"), m.mask(ls[len(ls)-1])+"\n")
	order := map[string]int{"ACTIVE_BLUE": 0, "SAVEPOINTING_BLUE": 1, "TRANSITIONING_TO_GREEN": 2, "ACTIVE_GREEN": 3}
	last, seen := -1, []string{}
	for i, line := range ls {
		if i > 0 {
			assert.NotEqual(t, ls[i-1], line, "line %d is printed again unchanged", i)
		}
		s := lineState(line)
		if s == "" {
			t.Logf("line %d: %s", i, line)
			continue
		}
		pos, ok := order[s]
		require.True(t, ok, "line %d: state %q is not on the way from blue to green: %s", i, s, line)
		require.GreaterOrEqual(t, pos, last, "line %d goes back to %s after %v", i, s, seen)
		if pos != last {
			seen = append(seen, s)
		}
		last = pos
	}
	t.Logf("states seen: %v in %d lines:\n%s", seen, len(ls), out.String())

	res = runCLI(t, append([]string{"get", "fbgd", "job"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	golden(t, filepath.Join("testdata", "get", "tree-green-active.golden"), m.mask(res.stdout))

	// The table of the namespace, and the object with its full revision.
	res = runCLI(t, append([]string{"get", "fbgd"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, "NAME  STATE  JOB  ACTIVE  REVISION  TARGET  READY  AGE\njob  ACTIVE_GREEN  RUNNING  job-green  main@<commit-2>  -  True  <d>\n",
		m.mask(res.stdout))
	res = runCLI(t, append([]string{"get", "flinkbluegreendeployment", "job", "-o", "json"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	var obj v1alpha1.FlinkBlueGreenDeployment
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &obj))
	assert.Equal(t, v1alpha1.FlinkBlueGreenDeploymentKind, obj.Kind)
	assert.Equal(t, "main@sha1:"+sha2, obj.Status.ActiveRevision, "-o keeps the full revision")
	assert.Empty(t, obj.ManagedFields)
	res = runCLI(t, append([]string{"get", "fbgd", "job", "-o", "yaml"}, kc...)...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "kind: FlinkBlueGreenDeployment\n")
	assert.Contains(t, res.stdout, "activeRevision: main@sha1:"+sha2+"\n")
}

// endingWatches asks the API server to end every watch after a second, as
// its own timeout (or a compaction) ends a long one, and counts them.
type endingWatches struct {
	client.WithWatch
	started, changed atomic.Int32
}

func (e *endingWatches) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	e.started.Add(1)
	timeout := int64(1)
	w, err := e.WithWatch.Watch(ctx, list, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{TimeoutSeconds: &timeout}})...)
	if err != nil {
		return nil, err
	}
	// Count the events that carry the change: a MODIFIED one, or the
	// ADDED one a new watch opens with when the change fell between two
	// watches.
	ch := make(chan watch.Event)
	go func() {
		defer close(ch)
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && cm.Data["v"] == "2" {
				e.changed.Add(1)
			}
			ch <- ev
		}
	}()
	return &proxyWatch{Interface: w, ch: ch}, nil
}

type proxyWatch struct {
	watch.Interface
	ch chan watch.Event
}

func (p *proxyWatch) ResultChan() <-chan watch.Event { return p.ch }

// TestGetWatchRestarts: a watch the server ends is started again, and a
// change made after that is still seen. It follows a ConfigMap, which no
// controller of the test cluster writes to.
func TestGetWatchRestarts(t *testing.T) {
	env := cluster(t)
	ns := newNamespace(t, env)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "followed", Namespace: ns}, Data: map[string]string{"v": "1"}}
	require.NoError(t, env.Client.Create(context.Background(), cm))
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.New()})
	require.NoError(t, err)
	ew := &endingWatches{WithWatch: wc}
	src := watchSource{newList: func() client.ObjectList { return &corev1.ConfigMapList{} },
		opts: []client.ListOption{client.InNamespace(ns), client.MatchingFields{"metadata.name": cm.Name}}}
	var changes atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); follow(ctx, ew, src, func() { changes.Add(1) }) }()
	eventually(t, "the watch ended by the server twice and started again", func() bool { return ew.started.Load() >= 3 })
	before := changes.Load()
	require.Zero(t, ew.changed.Load())
	cm.Data["v"] = "2"
	require.NoError(t, env.Client.Update(context.Background(), cm))
	eventually(t, "the change seen", func() bool { return ew.changed.Load() > 0 && changes.Load() > before })
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not stop when its context ended")
	}
}

// TestGetWatchWithoutATerminalPrintsALinePerChange: without a terminal
// --watch prints a timestamped line, in the words of the tree's Job: line,
// when the state, a colour's job or the Ready reason changed, and one per
// new Warning event; never a tree, nothing for a read that changed
// nothing (a resourceVersion bump, time passing), nothing for the events
// that were there before the watch. On a terminal every draw clears the
// screen and draws the tree.
func TestGetWatchWithoutATerminalPrintsALinePerChange(t *testing.T) {
	cases := treeCases()
	var out strings.Builder
	now := treeNow
	d := &drawer{g: &fbgdGetter{out: &out}, view: cases["active"], now: func() time.Time { return now }}
	assert.NoError(t, d.draw())
	assert.Equal(t, "2026-03-01T12:00:00Z fbgd flink/orders: ACTIVE_BLUE, job RUNNING on orders-blue (main@1a2b3c4); "+
		"orders-blue RUNNING; Ready True, Running\n", out.String())

	bumped := cases["active"]
	bumped.Parent = bumped.Parent.DeepCopy()
	bumped.Parent.ResourceVersion = "2"
	bumped.Parent.Status.LastReconciledTimestamp = treeAt(time.Minute)
	d.view, now = bumped, now.Add(time.Minute)
	assert.NoError(t, d.draw())
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), "a read that changed nothing a user reads prints nothing:\n%s", out.String())

	now = now.Add(time.Second)
	d.view = cases["savepointing"]
	assert.NoError(t, d.draw())
	now = now.Add(time.Second)
	d.view = cases["aborted"]
	assert.NoError(t, d.draw())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 4, out.String())
	assert.Equal(t, "2026-03-01T12:01:01Z fbgd flink/orders: SAVEPOINTING_BLUE, job RUNNING on orders-blue (main@1a2b3c4), "+
		"rolling out main@9f8e7d6 to orders-green; orders-blue RUNNING; Ready False, Savepointing", lines[1])
	assert.Equal(t, "2026-03-01T12:01:02Z fbgd flink/orders: ACTIVE_BLUE, rollout FAILED, job RUNNING on orders-blue (main@1a2b3c4); "+
		"orders-blue RUNNING, orders-green FINISHED (suspended); Ready False, Aborted", lines[2])
	assert.Equal(t, "2026-03-01T12:01:02Z fbgd flink/orders: Warning Aborted: "+cases["aborted"].Parent.Status.Error, lines[3],
		"a new Warning event, said once; the new Normal ones are in the state lines")
	assert.NotContains(t, out.String(), "Name:")
	d.missing = notFound(fbgdKind.short, types.NamespacedName{Namespace: "flink", Name: "orders"})
	assert.NoError(t, d.draw())
	assert.True(t, strings.HasSuffix(out.String(), "\n2026-03-01T12:01:02Z fbgd flink/orders not found\n"), "a deleted object is a change too")

	// The Warning events of the first read happened before the watch.
	var later strings.Builder
	d = &drawer{g: &fbgdGetter{out: &later}, view: cases["aborted"], now: func() time.Time { return now }}
	assert.NoError(t, d.draw())
	assert.Equal(t, 1, strings.Count(later.String(), "\n"), later.String())

	var term strings.Builder
	d = &drawer{g: &fbgdGetter{out: &term, terminal: true}, view: cases["active"]}
	assert.NoError(t, d.draw())
	assert.NoError(t, d.draw())
	assert.Equal(t, 2, strings.Count(term.String(), clearScreen), "a terminal is redrawn, relative times tick")
	assert.Contains(t, term.String(), clearScreen+"Name:         orders\n")
}
