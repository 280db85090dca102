/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// touch changes an unrelated annotation, which makes the controller
// reconcile the object without anything to do.
func touch(t *testing.T, obj client.Object, i int) {
	t.Helper()
	require := assert.New(t)
	require.NoError(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["test/touch"] = fmt.Sprint(i)
	obj.SetAnnotations(ann)
	require.NoError(env.Client.Patch(context.Background(), obj, patch))
}

// TestIdleObjectsWriteNothing: reconciles of a settled GitRepository and
// FlinkBlueGreenDeployment (no-op poll, re-apply without drift, unchanged
// decision) send no write request at all.
func TestIdleObjectsWriteNothing(t *testing.T) {
	ns := newNamespace(t)
	wc := startCountingController(t, ns)
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{
		"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, job.yaml"),
		"settings.yaml":      fmt.Sprintf(configMap, "settings", "v1"),
		"job.yaml":           fbgdManifest("flink:1.20.0", ""),
	})
	f.create("s3cr3t-pass")
	f.waitApplied(rev)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	before := settled(wc)
	lists := f.srv.Listings()
	for i := 0; i < 5; i++ {
		touch(t, f.get(), i)
		touch(t, getFBGD(t, ns, "job"), i)
		time.Sleep(300 * time.Millisecond)
	}
	assert.Greater(t, f.srv.Listings(), lists, "the GitRepository was reconciled (it listed the remote)")
	if !assert.Equal(t, before, wc.writes.Load(), "idle reconciles wrote (last: %v)", wc.last.Load()) {
		evs := &eventsv1.EventList{}
		_ = env.Client.List(context.Background(), evs, client.InNamespace(ns))
		for _, e := range evs.Items {
			t.Logf("event %s %s: %s", e.Regarding.Kind, e.Reason, e.Note)
		}
	}
}

// settled waits until the controller has sent no write for two seconds
// (events are sent asynchronously), then returns the count.
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
