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
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
)

// allocated runs f and returns the bytes it allocated on the heap in total
// (runtime.MemStats.TotalAlloc): an upper bound of how much more memory
// the process held at any moment while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// random is an incompressible file of size bytes.
func random(path string, size int64, seed uint64) gittest.File {
	return gittest.File{Path: path, Size: size, Content: io.LimitReader(rand.NewChaCha8([32]byte{byte(seed)}), size)}
}

// assertNothingStaged checks that a refused fetch left no pack behind:
// neither the staged download nor a pack go-git started to write.
func assertNothingStaged(t *testing.T, dir string) {
	t.Helper()
	for _, pattern := range []string{".git/incoming-*", ".git/objects/pack/*"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		require.NoError(t, err)
		assert.Empty(t, m, pattern)
	}
}

// TestFetchRefusesHugeBlob: a 256 MiB file of zeros compresses to about a
// MiB, so the pack is small while the blob, unpacked, would take the
// controller to about 940 MB (1.8 GB allocated in total) and write 256 MiB
// to the cache. With the default limits it is refused from the pack's
// object header, before the blob is unpacked: nothing of it is in memory
// or on disk.
func TestFetchRefusesHugeBlob(t *testing.T) {
	h := newHTTPRepo(t)
	gittest.ImportCommit(t, h.Bare, "main", gittest.Text("kustomization.yaml", "resources: []\n"), gittest.Zeros("zeros.bin", 256<<20))
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	var err error
	alloc := allocated(func() { _, err = Fetch(context.Background(), o) })
	t.Logf("the refused fetch of a 256 MiB blob allocated %d KiB in total", alloc>>10)
	assertFetchErr(t, err, ReasonLimitExceeded, "an object (a file, directory listing or commit) of 256.0 MiB: limit exceeded: file size limit (--git-max-file-size=8Mi)")
	assert.ErrorIs(t, err, ErrLimitExceeded)
	assert.True(t, err.(*Error).Terminal())
	assert.NoFileExists(t, filepath.Join(o.Dir, "zeros.bin"))
	assertNothingStaged(t, o.Dir)
	assert.Less(t, alloc, uint64(16<<20), "the blob must never be read into memory")
}

func TestFetchLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  []gittest.File
		limits Limits
		msg    string
	}{
		{"bytes received", []gittest.File{random("a.bin", 256<<10, 1)}, Limits{MaxFetchBytes: 64 << 10},
			"the server sent more than 64.0 KiB: limit exceeded: fetch size limit (--git-max-fetch-size=64Ki)"},
		{"objects unpack to more than the checkout limit", []gittest.File{random("a.bin", 60<<10, 1), random("b.bin", 60<<10, 2)}, Limits{MaxCheckoutBytes: 100 << 10},
			"the objects received unpack to more than 100.0 KiB: limit exceeded: checkout size limit (--git-max-checkout-size=100Ki)"},
		{"one blob in many paths", manyPaths(10, random("", 20<<10, 1)), Limits{MaxCheckoutBytes: 100 << 10},
			"the files add up to more than 100.0 KiB: limit exceeded: checkout size limit (--git-max-checkout-size=100Ki)"},
		{"files", manyPaths(10, gittest.Text("", "x\n")), Limits{MaxFiles: 5},
			"more than 5 files and directories: limit exceeded: file count limit (--git-max-files=5)"},
		{"directories count", []gittest.File{gittest.Text("a/b/c/d/e/f", "x\n")}, Limits{MaxFiles: 5},
			"more than 5 files and directories"},
		{"objects of the pack", manyDistinct(12), Limits{MaxObjects: 10},
			"the pack holds 15 objects: limit exceeded: object count limit (--git-max-objects=10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHTTPRepo(t)
			gittest.ImportCommit(t, h.Bare, "main", tc.files...)
			o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
			o.Limits = tc.limits
			_, err := Fetch(context.Background(), o)
			assertFetchErr(t, err, ReasonLimitExceeded, tc.msg)
			for _, f := range tc.files {
				assert.NoFileExists(t, filepath.Join(o.Dir, f.Path), "nothing is checked out")
			}
			assert.NoFileExists(t, filepath.Join(o.Dir, ".git", "index"))

			o.Limits = Limits{}
			fetchOK(t, &o) // the defaults fit
		})
	}
}

// manyDistinct is n small files with distinct contents (n blobs).
func manyDistinct(n int) []gittest.File {
	var fs []gittest.File
	for i := range n {
		fs = append(fs, gittest.Text(fmt.Sprintf("dir/f%d", i), fmt.Sprintf("%d\n", i)))
	}
	return fs
}

func manyPaths(n int, f gittest.File) []gittest.File {
	content, err := io.ReadAll(f.Content)
	if err != nil {
		panic(err)
	}
	var fs []gittest.File
	for i := range n {
		fs = append(fs, gittest.File{Path: fmt.Sprintf("dir/f%d", i), Size: f.Size, Content: strings.NewReader(string(content))})
	}
	return fs
}

// TestCheckoutLimitsApplyToCachedCommits: a commit already in the cache
// (fetched under larger limits) is checked again before its checkout, and
// the worktree stays at the commit it had.
func TestCheckoutLimitsApplyToCachedCommits(t *testing.T) {
	h := newHTTPRepo(t)
	small := gittest.ImportCommit(t, h.Bare, "main", gittest.Text("f", "1\n"))
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	fetchOK(t, &o)
	big := gittest.ImportCommit(t, h.Bare, "main", gittest.Text("f", "2\n"), random("big.bin", 200<<10, 1))
	assert.Equal(t, big, fetchOK(t, &o).Commit)
	gittest.Git(t, h.Bare, "update-ref", "refs/heads/main", small)
	assert.Equal(t, small, fetchOK(t, &o).Commit)

	gittest.Git(t, h.Bare, "update-ref", "refs/heads/main", big)
	o.Limits = Limits{MaxFileBytes: 100 << 10}
	uploads := h.srv.UploadPacks()
	_, err := Fetch(context.Background(), o)
	assertFetchErr(t, err, ReasonLimitExceeded, "checkout of "+big+": file big.bin is 200.0 KiB: limit exceeded: file size limit (--git-max-file-size=100Ki)")
	assert.Equal(t, uploads, h.srv.UploadPacks(), "the commit was in the cache")
	assert.NoFileExists(t, filepath.Join(o.Dir, "big.bin"))
	b, err := os.ReadFile(filepath.Join(o.Dir, "f"))
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(b), "the worktree keeps the last checkout")
}

// TestFetchCacheStaysBounded: packs accumulate one per fetch until they
// hold more than a fetch may receive; then the cache starts afresh.
func TestFetchCacheStaysBounded(t *testing.T) {
	h := newHTTPRepo(t)
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	o.Limits = Limits{MaxFetchBytes: 150 << 10}
	for i := range 4 {
		gittest.ImportCommit(t, h.Bare, "main", random("a.bin", 60<<10, uint64(i)))
		fetchOK(t, &o)
		n, size := packs(o.Dir)
		t.Logf("fetch %d: %d packs, %d KiB", i, n, size>>10)
		assert.LessOrEqual(t, size, int64(2*150<<10))
	}
}

// TestFetchTimeoutDuringDownload: a server that answers the listing and
// then never sends the pack is cut off at spec.timeout.
func TestFetchTimeoutDuringDownload(t *testing.T) {
	gittest.Isolate(t)
	root := t.TempDir()
	r := gittest.NewRepo(t, root, "app")
	r.Commit(map[string]string{"f": "1"}, "one")
	r.Push("main")
	done := make(chan struct{})
	srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method == http.MethodPost { // stall the upload-pack
				_, _ = io.Copy(io.Discard, req.Body)
				select {
				case <-req.Context().Done():
				case <-done:
				}
				return
			}
			next.ServeHTTP(w, req)
		})
	}})
	t.Cleanup(func() { close(done) }) // before the server closes
	start := time.Now()
	_, err := Fetch(context.Background(), Options{URL: srv.URL + "/app.git", Timeout: 500 * time.Millisecond,
		Dir: t.TempDir(), Ref: v1alpha1.GitRepositoryRef{Branch: "main"}})
	assertFetchErr(t, err, ReasonTimeout, "did not answer within spec.timeout (500ms)")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// floodServer answers every request with status and an endless body: pkt
// lines of refs for a 200 (an advertisement that never ends), anything
// for an error.
func floodServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		w.WriteHeader(status)
		if status == http.StatusOK {
			_, _ = io.WriteString(w, "001e# service=git-upload-pack\n0000")
		}
		for i := 0; ; i++ {
			line := fmt.Sprintf("%s refs/heads/branch-%09d\n", strings.Repeat("a", 40), i)
			if i == 0 {
				line = strings.Replace(line, "\n", "\x00side-band-64k\n", 1)
			}
			if _, err := fmt.Fprintf(w, "%04x%s", len(line)+4, line); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/r.git"
}

// TestFetchBoundsResponses: go-git keeps a ref advertisement, and the body
// of an error response, whole in memory; a server that sends them without
// end is cut off at a fixed limit instead of growing the heap until the
// timeout.
func TestFetchBoundsResponses(t *testing.T) {
	for name, status := range map[string]int{"advertisement": http.StatusOK, "error page": http.StatusInternalServerError} {
		t.Run(name, func(t *testing.T) {
			o := Options{URL: floodServer(t, status), Dir: t.TempDir(), Timeout: time.Minute, Ref: v1alpha1.GitRepositoryRef{Branch: "main"}}
			var err error
			alloc := allocated(func() { _, err = Fetch(context.Background(), o) })
			t.Logf("the refused listing allocated %d MiB in total", alloc>>20)
			assertFetchErr(t, err, ReasonLimitExceeded, "the server sent more than 16.0 MiB of refs: limit exceeded")
			assert.Less(t, alloc, uint64(512<<20))
		})
	}
}

// TestFetchLargeFileUnderTheLimit: files above the size go-git streams
// from the pack (largeObject) check out intact.
func TestFetchLargeFileUnderTheLimit(t *testing.T) {
	h := newHTTPRepo(t)
	f := random("big.bin", 3<<20, 9)
	want, err := io.ReadAll(random("", 3<<20, 9).Content)
	require.NoError(t, err)
	gittest.ImportCommit(t, h.Bare, "main", f)
	o := h.opts(t, v1alpha1.GitRepositoryRef{Branch: "main"})
	res := fetchOK(t, &o)
	got, err := os.ReadFile(filepath.Join(res.Dir, "big.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "content differs")
}
