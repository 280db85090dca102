/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// BenchmarkFetch compares a no-op poll (ls-remote, ref unchanged, nothing
// fetched) with a fresh shallow clone of a repository with 1,000 commits
// of 200 files, both over smart HTTP (git http-backend) with basic auth.
//
//	go test -run '^$' -bench BenchmarkFetch ./internal/source/
func BenchmarkFetch(b *testing.B) {
	gittest.Isolate(b)
	root := b.TempDir()
	gittest.NewLargeRepo(b, root, "big", 1000, 200)
	srv := gittest.ServeHTTP(b, root, gittest.HTTPOptions{Username: testUser, Password: testPass})
	url := srv.URL + "/big.git"
	auth, err := AuthFromSecret(map[string][]byte{"username": []byte(testUser), "password": []byte(testPass)}, url)
	if err != nil {
		b.Fatal(err)
	}
	base := Options{URL: url, Auth: auth, Timeout: time.Minute, Ref: v1alpha1.GitRepositoryRef{Branch: "main"}, AllowInsecureHTTP: true}

	b.Run("noop-poll", func(b *testing.B) {
		o := base
		o.Dir = filepath.Join(b.TempDir(), "cache")
		res, err := Fetch(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		o.LastRevision = res.Revision
		before := srv.UploadPacks()
		b.ResetTimer()
		for range b.N {
			res, err := Fetch(context.Background(), o)
			if err != nil || res.Fetched {
				b.Fatalf("fetched=%v err=%v", res.Fetched, err)
			}
		}
		b.StopTimer()
		if n := srv.UploadPacks() - before; n != 0 {
			b.Fatalf("%d upload-packs during no-op polls", n)
		}
	})
	b.Run("shallow-clone", func(b *testing.B) {
		dir := b.TempDir()
		for i := range b.N {
			o := base
			o.Dir = filepath.Join(dir, "cache", string(rune('a'+i%26)))
			b.StopTimer()
			_ = os.RemoveAll(o.Dir)
			b.StartTimer()
			res, err := Fetch(context.Background(), o)
			if err != nil || !res.Fetched {
				b.Fatalf("fetched=%v err=%v", res.Fetched, err)
			}
		}
	})
}

// BenchmarkFetchNearLimits fetches, with the default limits, a repository
// just under them: eight files of 7 MiB that differ in one line (so the
// server sends one in full and seven deltas against it, and go-git caches
// the base while it indexes), 56 MiB checked out. It reports the peak of
// the heap while the fetch runs (sampled every 2 ms) and what it allocated
// in total: the memory a tenant can make one fetch take.
//
//	go test -run '^$' -bench BenchmarkFetchNearLimits -benchtime 3x ./internal/source/
func BenchmarkFetchNearLimits(b *testing.B) {
	gittest.Isolate(b)
	root := b.TempDir()
	repo := gittest.NewRepo(b, root, "near")
	base := make([]byte, 7<<20)
	_, _ = io.ReadFull(rand.NewChaCha8([32]byte{1}), base)
	var files []gittest.File
	for i := range 8 {
		content := append([]byte(fmt.Sprintf("variant %d\n", i)), base...)
		files = append(files, gittest.File{Path: fmt.Sprintf("f%d.bin", i), Size: int64(len(content)), Content: bytes.NewReader(content)})
	}
	gittest.ImportCommit(b, repo.Bare, "main", files...)
	base, files = nil, nil
	srv := gittest.ServeHTTP(b, root, gittest.HTTPOptions{})
	var peak, total uint64
	for i := range b.N {
		o := Options{URL: srv.URL + "/near.git", Timeout: time.Minute, Ref: v1alpha1.GitRepositoryRef{Branch: "main"},
			Dir: filepath.Join(b.TempDir(), fmt.Sprint(i))}
		p, t := heapDuring(func() {
			if _, err := Fetch(context.Background(), o); err != nil {
				b.Fatal(err)
			}
		})
		peak, total = max(peak, p), total+t
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(total)/float64(b.N)/(1<<20), "alloc-MiB/op")
}

// heapDuring runs f and returns the highest heap size seen above the
// starting one, and the bytes f allocated in total.
func heapDuring(f func()) (peak, total uint64) {
	var before, m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	sampled := make(chan uint64)
	go func() {
		var high uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var s runtime.MemStats
			runtime.ReadMemStats(&s)
			high = max(high, s.HeapAlloc)
			select {
			case <-done:
				sampled <- high
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	high := <-sampled
	runtime.ReadMemStats(&m)
	if high > before.HeapAlloc {
		peak = high - before.HeapAlloc
	}
	return peak, m.TotalAlloc - before.TotalAlloc
}
