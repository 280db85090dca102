/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func hundredConfigMaps(ns string) []*unstructured.Unstructured {
	set := make([]*unstructured.Unstructured, 100)
	for i := range set {
		set[i] = configMap(ns, fmt.Sprintf("cm-%03d", i), map[string]any{"index": fmt.Sprint(i), "payload": "some configuration"})
	}
	return set
}

// BenchmarkApply100 applies 100 ConfigMaps: "first" creates them in a fresh
// namespace, "idle" re-applies an unchanged set. It reports API requests
// and writes per op.
func BenchmarkApply100(b *testing.B) {
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		a, count := newApplier(b)
		var total, writes int64
		for b.Loop() {
			b.StopTimer()
			ns := newNamespace(b)
			set := hundredConfigMaps(ns)
			count.reset()
			b.StartTimer()
			if _, err := a.Apply(ctx, set, Options{Source: source(ns)}); err != nil {
				b.Fatal(err)
			}
			total += count.total.Load()
			writes += count.writes.Load()
		}
		b.ReportMetric(float64(total)/float64(b.N), "requests/op")
		b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
	})
	b.Run("idle", func(b *testing.B) {
		a, count := newApplier(b)
		ns := newNamespace(b)
		set := hundredConfigMaps(ns)
		if _, err := a.Apply(ctx, set, Options{Source: source(ns)}); err != nil {
			b.Fatal(err)
		}
		count.reset()
		for b.Loop() {
			if _, err := a.Apply(ctx, set, Options{Source: source(ns)}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(count.total.Load())/float64(b.N), "requests/op")
		b.ReportMetric(float64(count.writes.Load())/float64(b.N), "writes/op")
	})
}
