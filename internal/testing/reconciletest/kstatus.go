/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// kstatus.go: KstatusViolations, CheckKstatus and WatchKstatus, which hold
// an object's status to the kstatus contract.

package reconciletest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// KstatusViolations lists how obj's status breaks the kstatus contract
// that kubectl wait, Flux, Argo CD and cli-utils read
// (sigs.k8s.io/cli-utils/pkg/kstatus): Ready=True never beside
// Reconciling=True or Stalled=True, Stalled=True only with Ready=False,
// and status.observedGeneration never ahead of metadata.generation. obj
// is a typed object or an unstructured one; nil when it keeps the
// contract.
func KstatusViolations(obj client.Object) []string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return []string{fmt.Sprintf("not convertible to unstructured: %v", err)}
		}
		u = &unstructured.Unstructured{Object: m}
	}
	status := func(typ string) string {
		list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range list {
			if m, ok := c.(map[string]any); ok && m["type"] == typ {
				s, _ := m["status"].(string)
				return s
			}
		}
		return ""
	}
	ready, reconciling, stalled := status(v1alpha1.ReadyCondition), status(v1alpha1.ReconcilingCondition), status(v1alpha1.StalledCondition)
	var out []string
	if ready == string(metav1.ConditionTrue) && reconciling == string(metav1.ConditionTrue) {
		out = append(out, "Ready=True beside Reconciling=True")
	}
	if ready == string(metav1.ConditionTrue) && stalled == string(metav1.ConditionTrue) {
		out = append(out, "Ready=True beside Stalled=True")
	}
	if stalled == string(metav1.ConditionTrue) && ready != string(metav1.ConditionFalse) {
		out = append(out, fmt.Sprintf("Stalled=True with Ready=%q, not False", ready))
	}
	if observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); found && observed > u.GetGeneration() {
		out = append(out, fmt.Sprintf("status.observedGeneration %d is ahead of metadata.generation %d", observed, u.GetGeneration()))
	}
	return out
}

// CheckKstatus fails tb (without stopping it) for every KstatusViolations
// of obj, with the object's conditions.
func CheckKstatus(tb testing.TB, obj client.Object) {
	tb.Helper()
	v := KstatusViolations(obj)
	if len(v) == 0 {
		return
	}
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = fmt.Sprintf("%T", obj)
	}
	var conds []metav1.Condition
	if c, ok := obj.(interface{ GetConditions() []metav1.Condition }); ok {
		conds = c.GetConditions()
	} else if u, ok := obj.(*unstructured.Unstructured); ok {
		list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range list {
			var cond metav1.Condition
			if m, ok := c.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond) == nil {
				conds = append(conds, cond)
			}
		}
	}
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s (observedGeneration %d)", c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	tb.Errorf("%s %s/%s (generation %d) breaks kstatus: %s; conditions:%s",
		kind, obj.GetNamespace(), obj.GetName(), obj.GetGeneration(), strings.Join(v, "; "), b.String())
}

// WatchKstatus checks every version of every GitRepository and
// FlinkBlueGreenDeployment of ns that the API server stores until the test
// ends, not only those a poll happens to read: a status that breaks the
// contract for the few milliseconds of an apply is caught too. Violations
// fail tb (CheckKstatus) when it ends.
func WatchKstatus(tb testing.TB, cfg *rest.Config, ns string) {
	tb.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		tb.Fatalf("watch kstatus: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu   sync.Mutex
		bad  []*unstructured.Unstructured
		done sync.WaitGroup
	)
	for _, resource := range []string{"gitrepositories", "flinkbluegreendeployments"} {
		gvr := v1alpha1.GroupVersion.WithResource(resource)
		w, err := dc.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			tb.Fatalf("watch %s: %v", resource, err)
		}
		done.Add(1)
		go func() {
			defer done.Done()
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if u, ok := ev.Object.(*unstructured.Unstructured); ok && len(KstatusViolations(u)) > 0 {
						mu.Lock()
						bad = append(bad, u)
						mu.Unlock()
					}
				}
			}
		}()
	}
	tb.Cleanup(func() {
		cancel()
		done.Wait()
		for _, u := range bad {
			CheckKstatus(tb, u)
		}
	})
}
