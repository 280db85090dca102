/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import "testing"

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
