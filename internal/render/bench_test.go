/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"errors"
	"testing"
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
