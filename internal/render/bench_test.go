/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func BenchmarkRenderOverlay(b *testing.B) {
	for _, overlay := range []string{"staging", "production"} {
		b.Run(overlay, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(examples, "overlays/"+overlay, goldenOpts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExponentialKustomization: how long the default limits take to
// refuse a chain of 12 kustomizations each including the previous twice
// (4,096 objects from 38 files; about a minute to render unbounded).
func BenchmarkExponentialKustomization(b *testing.B) {
	root := exponentialTree(b, 12)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(root, "l12", Options{}); !errors.Is(err, ErrLimitExceeded) {
			b.Fatal(err)
		}
	}
}

// worstFiles are files that stay within the default limits and cost
// kustomize the most memory for their size, one shape each: what a build
// within the limits can take.
func worstFiles() map[string]string {
	budget := int64(DefaultMaxNodes - 100) // the kustomization, and slack
	meta := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: worst\n"
	// fill is head, then as many items (at most limit) as fit the node
	// budget, then tail.
	fill := func(head string, item func(i int) string, tail string, limit int) string {
		file := func(k int) string {
			var b strings.Builder
			b.WriteString(head)
			for i := range k {
				b.WriteString(item(i))
			}
			b.WriteString(tail)
			return b.String()
		}
		lo, hi := 0, limit
		for lo < hi {
			mid := (lo + hi + 1) / 2
			f := file(mid)
			if readNodes("f.yaml", []byte(f), false) <= budget && len(f) <= 8<<20 {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return file(lo)
	}
	return map[string]string{
		// One string: text counts a node per 64 bytes.
		"text": fill(meta+"data:\n  k: ", func(int) string { return strings.Repeat("x", 1024) }, "\n", 8<<10),
		// A flow list of numbers.
		"flow list": fill(meta+"x: [0", func(int) string { return ",0" }, "]\n", 1<<20),
		// A block list of numbers.
		"block list": fill(meta+"x:\n", func(int) string { return "- 0\n" }, "", 1<<20),
		// A mapping with many keys (kustomize's time also grows with the
		// square of the keys of one mapping).
		"many keys": fill(meta+"data:\n", func(i int) string { return fmt.Sprintf("  k%d: v\n", i) }, "", 1<<20),
		// Realistic Deployments, as many as fit.
		"deployments": fill("", func(i int) string { return fmt.Sprintf(benchDeployment, i, i, i, i, i) }, "", DefaultMaxObjects),
	}
}

const benchDeployment = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  labels:
    app.kubernetes.io/name: app-%d
    app.kubernetes.io/part-of: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: app-%d
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-%d
    spec:
      containers:
        - name: app
          image: registry.example.com/shop/app-%d:1.2.3
          args: ["--port=8080", "--log-level=info"]
          ports:
            - containerPort: 8080
              name: http
          env:
            - name: A
              value: "1"
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {memory: 256Mi}
          readinessProbe:
            httpGet: {path: /healthz, port: http}
`

// BenchmarkWorstFileWithinLimits reports the peak heap of a build of each
// worst file within the default limits (MiB-peak-heap, sampled; not
// asserted): what doc.go promises a build stays under.
func BenchmarkWorstFileWithinLimits(b *testing.B) {
	files := worstFiles()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		content := files[name]
		root := writeTree(b, map[string]string{"app/kustomization.yaml": kustomization("f.yaml"), "app/f.yaml": content})
		b.Run(name, func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				p, err := peakHeap(func() error {
					_, err := Build(root, "app", Options{Limits: Limits{Timeout: -1}})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-heap")
			b.ReportMetric(float64(len(content))/(1<<10), "KiB-file")
		})
	}
}

// peakHeap runs f and returns the most heap its objects took above what
// was live before, sampled every millisecond.
func peakHeap(f func() error) (uint64, error) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	err := f()
	close(stop)
	<-stopped
	return peak.Load(), err
}
