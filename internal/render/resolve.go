/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// resolve.go: resolve, which follows symlinks component by component and
// refuses any path that leaves the root.

package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxLinkHops bounds symlink chains, like the kernel's ELOOP limit.
const maxLinkHops = 40

// linkReader reports whether the absolute path p is a symbolic link and, if
// so, its target. A path that does not exist is not a link.
type linkReader func(p string) (target string, isLink bool, err error)

// diskLinks reads symlinks from the real file system.
func diskLinks(p string) (string, bool, error) {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return "", false, nil
	}
	t, err := os.Readlink(p)
	if err != nil {
		return "", false, fmt.Errorf("read symlink %s: %w", p, err)
	}
	return t, true, nil
}

// mapLinks reads symlinks from a map of absolute path to target (a Git tree).
func mapLinks(m map[string]string) linkReader {
	return func(p string) (string, bool, error) {
		t, ok := m[p]
		return t, ok, nil
	}
}

// resolve returns the physical path that p designates inside root, following
// symlinks component by component and treating ".." physically, as the
// kernel does. Any step above root, absolute path outside root or symlink
// whose target lies outside root is refused with a *PathError. Relative
// paths are taken relative to root; root must be absolute, clean and free of
// symlinks itself.
func resolve(root, p string, links linkReader) (string, error) {
	comps, ok := components(root, p)
	if !ok {
		return "", &PathError{Path: p}
	}
	cur, hops, via := root, 0, (*PathError)(nil)
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if cur == root {
				return "", leaveError(p, via)
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		target, isLink, err := links(next)
		if err != nil {
			return "", err
		}
		if !isLink {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		via = &PathError{Path: p, Link: rel(root, next), Target: target}
		tcomps, ok := components(root, target)
		if !ok {
			return "", via
		}
		if filepath.IsAbs(target) {
			cur = root
		}
		comps = append(tcomps, comps...)
	}
	return cur, nil
}

// components splits p into the components to walk from root (absolute p) or
// from the current directory (relative p); ok is false when an absolute p is
// not below root.
func components(root, p string) ([]string, bool) {
	if !filepath.IsAbs(p) {
		return strings.Split(filepath.ToSlash(p), "/"), true
	}
	if p == root {
		return nil, true
	}
	prefix := root
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if !strings.HasPrefix(p, prefix) {
		return nil, false
	}
	return strings.Split(p[len(prefix):], "/"), true
}

func leaveError(p string, via *PathError) error {
	if via != nil {
		return via
	}
	return &PathError{Path: p}
}

// rel returns p relative to root for messages.
func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}

// within reports whether the clean absolute path p is root or below it.
func within(root, p string) bool {
	_, ok := components(root, p)
	return ok
}
