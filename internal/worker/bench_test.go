/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package worker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/source"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// benchTree is a small overlay: a base of two objects and a patch.
func benchTree(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	files := map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n- job.yaml\n",
		"base/cm.yaml":            configMap,
		"base/job.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: job\ndata:\n  image: flink:1.20\n",
		"app/kustomization.yaml":  "resources:\n- ../base\nnamePrefix: prod-\ncommonLabels:\n  team: a\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// settle waits, off the clock, for the spare a request took to be
// replaced and to finish its start-up: a change that comes alone.
func settle(b *testing.B) {
	b.StopTimer()
	time.Sleep(1500 * time.Millisecond)
	b.StartTimer()
}

// BenchmarkBuild: a kustomize build of a small overlay in the controller
// process, in a worker whose spare is ready (a change alone), and back to
// back (a burst: the next request may find its spare still starting).
func BenchmarkBuild(b *testing.B) {
	skipOffLinux(b)
	root := benchTree(b)
	o := render.Options{Revision: "main@sha1:abc", Source: "ns/repo"}
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, err := render.Build(root, "app", o); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, alone := range []bool{true, false} {
		name := "worker/burst"
		if alone {
			name = "worker/alone"
		}
		b.Run(name, func(b *testing.B) {
			p := &Pool{Slots: 1}
			p.Warm()
			for b.Loop() {
				if alone {
					settle(b)
				}
				if _, err := p.Build(b.Context(), root, "app", o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFetch: a first fetch (clone and checkout) of a small repository
// from a smart-HTTP git server, in the controller process and in a worker
// whose spare is ready.
func BenchmarkFetch(b *testing.B) {
	skipOffLinux(b)
	gittest.Isolate(b)
	root := b.TempDir()
	r := gittest.NewRepo(b, root, "app")
	gittest.ImportCommit(b, r.Bare, "main", gittest.Text("app/cm.yaml", configMap))
	srv := gittest.ServeHTTP(b, root, gittest.HTTPOptions{})
	o := source.Options{URL: srv.URL + "/app.git", Timeout: 30 * time.Second, AllowInsecureHTTP: true}
	o.Ref.Branch = "main"
	fresh := func() source.Options {
		o := o
		o.Dir = filepath.Join(b.TempDir(), "cache")
		return o
	}
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, err := source.Fetch(b.Context(), fresh()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("worker/alone", func(b *testing.B) {
		p := &Pool{Slots: 1}
		p.Warm()
		for b.Loop() {
			settle(b)
			if _, err := p.Fetch(b.Context(), "team-a", fresh(), nil, "", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}
