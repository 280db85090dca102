/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSandboxPath checks the one property the sandbox exists for: whatever
// path kustomize asks for, the answer is inside the repository or an error.
// It drives both the pure resolver (Git trees) and the on-disk sandbox
// against a repository whose symlinks point inside, outside, upward and in
// loops, with a secret file next to the repository.
func FuzzSandboxPath(f *testing.F) {
	for _, seed := range []string{
		"", ".", "/", "..", "../../etc/passwd", "/etc/passwd", "a/../../b",
		"in/x", "out/passwd", "up/secret", "loop", "sub/back/x", "in/..",
		"/repo/../repo/x", "a//b/./c", "sub/../../repo/x", "out", "in/../out/x",
		"\x00", "kustomization.yaml", "sub/../in/../up",
	} {
		f.Add(seed)
	}
	links := map[string]string{
		"/repo/in":       "sub",
		"/repo/out":      "/etc",
		"/repo/up":       "../..",
		"/repo/loop":     "loop",
		"/repo/sub/back": "../in",
		"/repo/sub/abs":  "/repo/in",
	}
	disk, secret := fuzzDiskRepo(f)
	f.Fuzz(func(t *testing.T, p string) {
		got, err := resolve(memRoot, p, mapLinks(links))
		if err == nil && (!within(memRoot, got) || filepath.Clean(got) != got) {
			t.Fatalf("resolve(%q) = %q: outside the repository or not clean", p, got)
		}
		for _, q := range []string{p, filepath.Join(disk.root, p)} {
			if b, err := disk.ReadFile(q); err == nil && strings.Contains(string(b), secret) {
				t.Fatalf("ReadFile(%q) read the secret outside the repository", q)
			}
			if _, r, err := disk.path(q); err == nil && !within(disk.root, r) {
				t.Fatalf("path(%q) = %q: outside the repository", q, r)
			}
		}
	})
}

// fuzzDiskRepo builds <tmp>/repo with escaping symlinks and <tmp>/secret.
func fuzzDiskRepo(f *testing.F) (*sandboxFS, string) {
	tmp := f.TempDir()
	const secret = "TOP-SECRET-OUTSIDE"
	must := func(err error) {
		if err != nil {
			f.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(tmp, "secret"), []byte(secret), 0o644))
	repo := filepath.Join(tmp, "repo")
	must(os.MkdirAll(filepath.Join(repo, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(repo, "kustomization.yaml"), []byte("resources: []\n"), 0o644))
	for name, target := range map[string]string{
		"in": "sub", "out": tmp, "up": "..", "loop": "loop",
		"sub/back": "../in", "sub/secret": "../../secret", "abs-secret": filepath.Join(tmp, "secret"),
	} {
		must(os.Symlink(target, filepath.Join(repo, name)))
	}
	sb, err := newDiskSandbox(repo)
	must(err)
	return sb, secret
}

// FuzzFetchableCoversKustomizeLoader checks the property the remote-off
// preflight rests on: whatever string kustomize's loader would fetch (one
// net/url parses with scheme http or https, loader.IsRemoteFile), as a path
// or as the path of a "key=path" generator source, fetchable refuses.
func FuzzFetchableCoversKustomizeLoader(f *testing.F) {
	for _, seed := range []string{
		"http://example.com/x", "HTTPS://x", "http:x", "http:/x", " http://x", "k=https://x",
		"a\nb=http://x", "git::https://x", "file:///etc", "cm.yaml", "../base", "k=v",
		"apiVersion: v1\nkind: X\npath: http://x\n", "http://x\n", "h\ttp://x",
	} {
		f.Add(seed)
	}
	fetched := func(p string) bool {
		u, err := url.Parse(p)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https")
	}
	f.Fuzz(func(t *testing.T, s string) {
		paths := []string{s}
		if strings.Count(s, "=") == 1 {
			paths = append(paths, s[strings.Index(s, "=")+1:])
		}
		for _, p := range paths {
			if _, ok := fetchable(s); fetched(p) && !ok {
				t.Fatalf("kustomize would fetch %q (from %q), fetchable does not refuse it", p, s)
			}
		}
	})
}
