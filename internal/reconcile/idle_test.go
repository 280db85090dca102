/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// touchAnnotation is the unrelated annotation touch sets.
const touchAnnotation = "test/touch"

// touch changes an unrelated annotation (and sets extra ones), which makes
// the controller reconcile the object.
func touch(t *testing.T, obj client.Object, i int, extra map[string]string) {
	t.Helper()
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[touchAnnotation] = fmt.Sprint(i)
	for k, v := range extra {
		ann[k] = v
	}
	obj.SetAnnotations(ann)
	require.NoError(t, env.Client.Patch(context.Background(), obj, patch))
}

// readWitness records, for the object paths it follows, the touch values
// the controller read back from the API server. The
// FlinkBlueGreenDeployment reconciler reads its object from the API
// server (APIReader) once, at the start of each reconcile, and
// controller-runtime never runs two reconciles of one
// object at once: a read of touch i+1 proves that the reconcile which
// read touch i has returned, its writes sent. (The GitRepository
// reconciler reads from the cache: TestIdleObjectsWriteNothing follows
// its reconciles by their listings of the remote instead.)
type readWitness struct {
	next http.RoundTripper

	mu    sync.Mutex
	paths map[string]map[string]bool // followed path → touch values read
}

func (w *readWitness) follow(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paths[path] = map[string]bool{}
}

func (w *readWitness) read(path, value string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.paths[path][value]
}

func (w *readWitness) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || resp.StatusCode != http.StatusOK || r.URL.Query().Has("watch") {
		return resp, err
	}
	w.mu.Lock()
	seen, followed := w.paths[r.URL.Path]
	w.mu.Unlock()
	if !followed {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) == nil {
		if v, ok := obj.Metadata.Annotations[touchAnnotation]; ok {
			w.mu.Lock()
			seen[v] = true
			w.mu.Unlock()
		}
	}
	return resp, nil
}

// startWitnessedController is startCountingController with the
// controller's reads witnessed too.
func startWitnessedController(t *testing.T, ns string) (*writeCounter, *readWitness) {
	t.Helper()
	wc, rw := &writeCounter{}, &readWitness{paths: map[string]map[string]bool{}}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		rw.next = rt
		wc.next = rw
		return wc
	})
	startControllerWith(t, ns, cfg)
	return wc, rw
}

// touchAndWitness touches the object at path with i and waits until the
// controller has read it carrying i.
func touchAndWitness(t *testing.T, ns string, rw *readWitness, path string, obj client.Object, i int, extra map[string]string) {
	t.Helper()
	touch(t, obj, i, extra)
	eventually(t, ns, fmt.Sprintf("a reconcile reading %s with touch %d", path, i), func() bool {
		return rw.read(path, fmt.Sprint(i))
	})
}

// TestIdleObjectsWriteNothing: reconciles of a settled GitRepository and
// FlinkBlueGreenDeployment (no-op poll, re-apply without drift, unchanged
// decision) send no write request at all.
func TestIdleObjectsWriteNothing(t *testing.T) {
	ns := newNamespace(t)
	wc, rw := startWitnessedController(t, ns)
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	fbgdPath := "/apis/bggitops.dev/v1alpha1/namespaces/" + ns + "/flinkbluegreendeployments/job"
	rw.follow(fbgdPath)
	before := settled(wc)
	const touches = 5

	// The GitRepository first: its reconciles read the
	// FlinkBlueGreenDeployment too (the applier's drift check), so they
	// must be over before the deployment's own reads can be told apart.
	// They read the GitRepository from the cache, so each touch is
	// followed by the listing of the remote its reconcile makes. The last
	// touch also suspends it: a suspended GitRepository fetches and
	// applies nothing, and its one write (Ready turns to Suspended) comes
	// from a reconcile that started after every earlier one returned (one
	// object's reconciles never overlap).
	for i := 0; i < touches; i++ {
		lists := f.srv.Listings()
		touch(t, f.get(), i, nil)
		eventually(t, ns, fmt.Sprintf("a reconcile listing the remote after touch %d", i), func() bool {
			return f.srv.Listings() > lists
		})
	}
	touch(t, f.get(), touches, map[string]string{v1alpha1.SuspendAnnotation: "true"})
	eventually(t, ns, "Ready Suspended", func() bool {
		c := apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.ReadyCondition)
		return c != nil && c.Reason == "Suspended"
	})

	for i := 0; i < touches; i++ {
		touchAndWitness(t, ns, rw, fbgdPath, getFBGD(t, ns, "job"), i, nil)
	}
	touchAndWitness(t, ns, rw, fbgdPath, getFBGD(t, ns, "job"), touches, nil)
	ready := apimeta.FindStatusCondition(f.get().Status.Conditions, v1alpha1.ReadyCondition)
	require.NotNil(t, ready)
	assert.Equal(t, "Suspended", ready.Reason, "a suspended GitRepository says so")
	// The suspension itself is the one write: Ready turns to Suspended.
	if !assert.Equal(t, before+1, wc.writes.Load(), "idle reconciles wrote (last: %v)", wc.last.Load()) {
		evs := &eventsv1.EventList{}
		_ = env.Client.List(context.Background(), evs, client.InNamespace(ns))
		for _, e := range evs.Items {
			t.Logf("event %s %s: %s", e.Regarding.Kind, e.Reason, e.Note)
		}
	}
}

// settled waits until the controller has sent no write for two seconds
// (events are sent asynchronously), then returns the count. It is the
// test's starting line, not its proof: a write it misses makes the test
// fail, never pass.
func settled(wc *writeCounter) int64 {
	n := wc.writes.Load()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(2 * time.Second)
		m := wc.writes.Load()
		if m == n {
			return n
		}
		n = m
	}
	return n
}
