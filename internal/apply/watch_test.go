/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// settle applies set until an Apply sends no request (its watches have
// listed), and fails the test when that takes longer than 10 s.
func settle(t *testing.T, a *Applier, count *counter, set []*unstructured.Unstructured, o Options) Result {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		count.reset()
		res := mustApply(t, a, set, o)
		if count.total.Load() == 0 {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("an idle Apply still sends %d requests after 10 s", count.total.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settledConfigMap applies one ConfigMap in a new namespace as the
// Applier's own user and settles: its watch shows it in sync.
func settledConfigMap(t *testing.T) (*Applier, *counter, []*unstructured.Unstructured, Options) {
	t.Helper()
	a, count := newApplier(t)
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{configMap(ns, "a", map[string]any{"k": "1"})}
	o := Options{Source: source(ns)}
	mustApply(t, a, set, o)
	settle(t, a, count, set, o)
	return a, count, set, o
}

// untilChanged applies set until the Apply reports id as something else
// than unchanged (its watch has seen what happened to the object), and
// fails the test after 10 s.
func untilChanged(t *testing.T, a *Applier, set []*unstructured.Unstructured, o Options, id string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := mustApply(t, a, set, o)
		if act := actions(res)[id]; act != ActionUnchanged {
			return act
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still unchanged 10 s after it was changed", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestAnIdleApplyOfUntouchedObjectsSendsNoRequest(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{
		configMap(ns, "a", map[string]any{"k": "1"}),
		configMap(ns, "b", map[string]any{"k": "2"}),
		fbgd(ns, "job", "flink:1.20.0"),
	}
	o := Options{Source: source(ns)}
	mustApply(t, a, set, o)
	settle(t, a, count, set, o)
	for range 3 {
		count.reset()
		res := mustApply(t, a, set, o)
		wantActions(t, res, map[string]string{
			"ConfigMap/" + ns + "/a":                  ActionUnchanged,
			"ConfigMap/" + ns + "/b":                  ActionUnchanged,
			"FlinkBlueGreenDeployment/" + ns + "/job": ActionUnchanged,
		})
		require.Zero(t, count.total.Load(), "requests of an idle Apply")
	}

	// A status write (another controller's) changes the resourceVersion of
	// an object that keeps a generation, not what was applied.
	job := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "job"}, job))
	job.Status.JobStatus.State = "RUNNING"
	require.NoError(t, env.Client.Status().Update(context.Background(), job))
	seen(t, a, job.Name, job.ResourceVersion)
	count.reset()
	mustApply(t, a, set, o)
	require.Zero(t, count.total.Load(), "requests of an idle Apply after a status write")

	// A new revision in Git is dry-run and applied.
	set[1] = configMap(ns, "b", map[string]any{"k": "3"})
	count.reset()
	res := mustApply(t, a, set, o)
	require.Equal(t, ActionConfigured, actions(res)["ConfigMap/"+ns+"/b"])
	require.NotZero(t, count.total.Load())
}

func TestDriftIsSeenByTheWatchAndCorrected(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	ctx := context.Background()
	cm := configMap(ns, "a", map[string]any{"k": "1"})
	cm.SetLabels(map[string]string{"team": "data"})
	job := fbgd(ns, "job", "flink:1.20.0")
	job.SetLabels(map[string]string{"team": "data"})
	set := []*unstructured.Unstructured{cm, job}
	o := Options{Source: source(ns)}
	mustApply(t, a, set, o)
	settle(t, a, count, set, o)
	cmID, jobID := "ConfigMap/"+ns+"/a", "FlinkBlueGreenDeployment/"+ns+"/job"
	getJob := func() *v1alpha1.FlinkBlueGreenDeployment {
		job := &v1alpha1.FlinkBlueGreenDeployment{}
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, job))
		return job
	}
	getCM := func() *corev1.ConfigMap {
		cm, ok := getConfigMap(t, ns, "a")
		require.True(t, ok, "configmap a exists")
		return cm
	}
	for _, tc := range []struct {
		name, id, want string
		drift          func() client.Object // makes the drift; nil: the object is deleted
		restored       func() bool
	}{
		{"an edited field", cmID, ActionConfigured,
			func() client.Object { cm := getCM(); cm.Data["k"] = "edited"; return cm },
			func() bool { return getCM().Data["k"] == "1" }},
		{"a changed label", cmID, ActionConfigured,
			func() client.Object { cm := getCM(); cm.Labels["team"] = "web"; return cm },
			func() bool { return getCM().Labels["team"] == "data" }},
		{"a deleted object", cmID, ActionCreated, nil,
			func() bool { _, ok := getConfigMap(t, ns, "a"); return ok }},
		{"a changed label of an object that keeps a generation", jobID, ActionConfigured,
			func() client.Object { job := getJob(); job.Labels["team"] = "web"; return job },
			func() bool { return getJob().Labels["team"] == "data" }},
		{"an edited spec of an object that keeps a generation", jobID, ActionConfigured,
			func() client.Object { job := getJob(); job.Spec.Template.Spec.Image = "flink:edited"; return job },
			func() bool { return getJob().Spec.Template.Spec.Image == "flink:1.20.0" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.drift == nil {
				require.NoError(t, env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}))
			} else {
				require.NoError(t, env.Client.Update(ctx, tc.drift()))
			}
			require.Equal(t, tc.want, untilChanged(t, a, set, o, tc.id))
			require.True(t, tc.restored(), "the object is as Git has it again")
			settle(t, a, count, set, o)
		})
	}
}

func TestAnIdentityThatMayNotWatchIsDryRunEveryTime(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	sa := serviceAccountForConfigMaps(t, ns, "get", "create", "patch", "update", "delete")
	set := []*unstructured.Unstructured{configMap(ns, "a", map[string]any{"k": "1"})}
	o := Options{ServiceAccountName: sa, Namespace: ns, Source: source(ns)}
	mustApply(t, a, set, o)
	for range 5 {
		count.reset()
		res := mustApply(t, a, set, o)
		wantActions(t, res, map[string]string{"ConfigMap/" + ns + "/a": ActionUnchanged})
		require.NotZero(t, count.total.Load(), "an Apply with no watch of the object sent no request")
		time.Sleep(100 * time.Millisecond)
	}
}

func TestWhatOneIdentityAppliedIsNotTakenAsAnothersPermission(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{configMap(ns, "a", map[string]any{"k": "1"})}
	mustApply(t, a, set, Options{Source: source(ns)})
	settle(t, a, count, set, Options{Source: source(ns)})

	// The account may read and watch the object, not write it.
	sa := serviceAccountForConfigMaps(t, ns, "get", "list", "watch")
	for range 20 {
		_, err := a.Apply(context.Background(), set, Options{ServiceAccountName: sa, Namespace: ns, Source: source(ns)})
		wantErrorContains(t, err, "forbidden", "system:serviceaccount:"+ns+":"+sa)
		time.Sleep(100 * time.Millisecond)
	}
}

func TestAWatchThatEndedWithAnErrorIsNotTrusted(t *testing.T) {
	a, count, set, o := settledConfigMap(t)

	a.watches.mu.Lock()
	ended := map[watchKey]*watched{}
	for key, e := range a.watches.m {
		ended[key] = e
	}
	a.watches.mu.Unlock()
	require.NotEmpty(t, ended)
	for key, e := range ended {
		a.watches.end(key, e, errors.New("connection reset"))
	}
	for range 3 {
		count.reset()
		mustApply(t, a, set, o)
		require.NotZero(t, count.total.Load(), "an Apply trusted a watch that ended with an error")
	}
}

func fbgd(ns, name, image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "FlinkBlueGreenDeployment",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"image": image, "flinkVersion": "v1_20",
			"flinkConfiguration": map[string]any{"state.savepoints.dir": "file:///flink-sp"},
			"jobManager":         map[string]any{"resource": map[string]any{"memory": "1024m", "cpu": int64(1)}},
			"taskManager":        map[string]any{"resource": map[string]any{"memory": "1024m", "cpu": int64(1)}},
			"job":                map[string]any{"jarURI": "local:///opt/flink/job.jar", "upgradeMode": "savepoint", "parallelism": int64(1)},
		}}},
	}}
}

// seen waits until a watch of a holds the object name at resourceVersion
// rv, and fails the test after 10 s.
func seen(t *testing.T, a *Applier, name, rv string) {
	t.Helper()
	require.Eventually(t, func() bool {
		a.watches.mu.Lock()
		defer a.watches.mu.Unlock()
		for key, e := range a.watches.m {
			id := name
			if key.namespace != "" {
				id = key.namespace + "/" + name
			}
			obj, ok, _ := e.inf.GetStore().GetByKey(id)
			if pm, is := obj.(*metav1.PartialObjectMetadata); ok && is && pm.ResourceVersion == rv {
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "the watch never saw %s at %s", name, rv)
}

func TestAnApplyAfterCloseStartsNoWatch(t *testing.T) {
	a, count, set, o := settledConfigMap(t)

	a.Close()
	for range 10 {
		count.reset()
		mustApply(t, a, set, o)
		require.NotZero(t, count.total.Load(), "an Apply after Close trusted a watch")
		time.Sleep(100 * time.Millisecond)
	}
	a.watches.mu.Lock()
	defer a.watches.mu.Unlock()
	require.Empty(t, a.watches.m, "watches started after Close")
}

// stall holds back what watch responses deliver while on: the watch stays
// open with no error, as a stuck stream or a half-open connection does.
type stall struct{ on atomic.Bool }

type stallTransport struct {
	rt http.RoundTripper
	s  *stall
}

func (t *stallTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err == nil && req.URL.Query().Get("watch") == "true" {
		resp.Body = &stalledBody{ReadCloser: resp.Body, s: t.s}
	}
	return resp, err
}

type stalledBody struct {
	io.ReadCloser
	s *stall
}

func (b *stalledBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for b.s.on.Load() {
		time.Sleep(10 * time.Millisecond)
	}
	return n, err
}

func TestAStalledWatchIsTrustedOnlyForALimitedTime(t *testing.T) {
	old := trustFor
	trustFor = 2 * time.Second
	t.Cleanup(func() { trustFor = old })
	s := &stall{}
	c := &counter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &countingTransport{rt: &stallTransport{rt: rt, s: s}, c: c}
	})
	a, err := NewApplier(cfg, testenv.Scheme())
	require.NoError(t, err)
	t.Cleanup(a.Close)
	t.Cleanup(func() { s.on.Store(false) })
	ns := newNamespace(t)
	set := []*unstructured.Unstructured{configMap(ns, "a", map[string]any{"k": "1"})}
	o := Options{Source: source(ns)}
	mustApply(t, a, set, o)
	settle(t, a, c, set, o)

	s.on.Store(true)
	live, _ := getConfigMap(t, ns, "a")
	live.Data["k"] = "edited"
	require.NoError(t, env.Client.Update(context.Background(), live))
	require.Equal(t, ActionConfigured, untilChanged(t, a, set, o, "ConfigMap/"+ns+"/a"))
	live, _ = getConfigMap(t, ns, "a")
	require.Equal(t, "1", live.Data["k"])
}

func TestAWatchKeepsNoMetadataValuesOfTheObjectsItSees(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	ctx := context.Background()
	// kubectl apply keeps a Secret's data in an annotation.
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns,
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"hunter2-not-ours"}}`}},
		StringData: map[string]string{"password": "hunter2-not-ours"}}
	require.NoError(t, env.Client.Create(ctx, other))
	ours := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "app", "namespace": ns}, "stringData": map[string]any{"k": "v"}}}
	set := []*unstructured.Unstructured{ours}
	o := Options{Source: source(ns)}
	mustApply(t, a, set, o)
	settle(t, a, count, set, o)

	a.watches.mu.Lock()
	defer a.watches.mu.Unlock()
	require.NotEmpty(t, a.watches.m)
	for key, e := range a.watches.m {
		for _, obj := range e.inf.GetStore().List() {
			pm := obj.(*metav1.PartialObjectMetadata)
			require.Empty(t, pm.ManagedFields, "watch %v keeps managed fields of %s", key, pm.Name)
			require.Empty(t, pm.Labels, "watch %v keeps labels of %s", key, pm.Name)
			require.Equal(t, []string{hashAnnotation}, slices.Collect(maps.Keys(pm.Annotations)), "watch %v keeps annotations of %s", key, pm.Name)
		}
	}
}

func TestTheSyncRecordOfAPrunedObjectIsForgotten(t *testing.T) {
	a, _ := newApplier(t)
	ns := newNamespace(t)
	o := Options{Source: source(ns), Prune: true}
	var res Result
	// A configMapGenerator's name changes with its content.
	for i := range 10 {
		set := []*unstructured.Unstructured{configMap(ns, fmt.Sprintf("cfg-%d", i), map[string]any{"k": "1"})}
		o.Inventory = res.Inventory
		res = mustApply(t, a, set, o)
	}
	a.memo.mu.Lock()
	defer a.memo.mu.Unlock()
	require.Len(t, a.memo.m, 1)
}

func TestAPermissionTakenAwayShowsAtTheNextChange(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	sa := serviceAccountForConfigMaps(t, ns, "get", "list", "watch", "create", "patch", "update", "delete")
	set := []*unstructured.Unstructured{configMap(ns, "a", map[string]any{"k": "1"})}
	o := Options{ServiceAccountName: sa, Namespace: ns, Source: source(ns)}
	mustApply(t, a, set, o)
	settle(t, a, count, set, o)

	ctx := context.Background()
	role := &rbacv1.Role{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "configmaps"}, role))
	role.Rules[0].Verbs = []string{"get", "list", "watch"}
	require.NoError(t, env.Client.Update(ctx, role))
	_, err := a.Apply(ctx, []*unstructured.Unstructured{configMap(ns, "a", map[string]any{"k": "2"})}, o)
	wantErrorContains(t, err, "forbidden", "system:serviceaccount:"+ns+":"+sa)
}

// A PriorityClass gets generation 1 and keeps it whatever changes.
func TestDriftOfABuiltinKindWhoseGenerationNeverMovesIsCorrected(t *testing.T) {
	a, count := newApplier(t)
	ns := newNamespace(t)
	ctx := context.Background()
	name := "drift-" + ns
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
		"metadata": map[string]any{"name": name},
		"value":    int64(1000), "globalDefault": false, "description": "from git",
	}}
	set := []*unstructured.Unstructured{pc}
	o := Options{Source: source(ns)}
	mustApply(t, a, set, o)
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	settle(t, a, count, set, o)

	live := &schedulingv1.PriorityClass{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: name}, live))
	gen := live.Generation
	live.Description = "changed by hand"
	require.NoError(t, env.Client.Update(ctx, live))
	require.Equal(t, gen, live.Generation, "the generation does not move")
	require.Equal(t, ActionConfigured, untilChanged(t, a, set, o, "PriorityClass/"+name))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: name}, live))
	require.Equal(t, "from git", live.Description)
}
