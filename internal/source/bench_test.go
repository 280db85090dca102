/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/source/gittest"
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
	base := Options{URL: url, Auth: auth, Timeout: time.Minute, Ref: v1alpha1.GitRepositoryRef{Branch: "main"}}

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
