/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// cache.go: Cache, one directory per repository under a root, keeping the
// directories not in use within a byte budget (least recently used evicted).

package source

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// DefaultMaxCacheBytes is the budget of the directories at rest in the
// cache volume (--git-max-cache-size). With four fetches running at once
// (about 320 MiB each at their peak, see Limits) the volume peaks under
// the 2Gi sizeLimit of config/manager.
const DefaultMaxCacheBytes = 512 << 20

// FlagMaxCacheSize is the controller flag that sets Cache's budget.
const FlagMaxCacheSize = "git-max-cache-size"

// evictedPrefix names directories being removed after an eviction.
const evictedPrefix = ".evicted-"

// Cache hands out one directory per repository under a root, and keeps
// the directories not in use within a byte budget. The limits of one
// fetch bound one directory; only the budget bounds how many repositories
// fill the volume, which every tenant shares: without it, enough
// GitRepositories at their limits fill the volume, and the kubelet evicts
// the controller of every tenant. Past the budget, the least recently used
// directories are removed; their repositories are fetched afresh at their
// next reconcile, which costs a full (shallow) fetch and nothing else.
type Cache struct {
	root string
	max  int64 // 0: no budget

	mu      sync.Mutex
	entries map[string]*cacheEntry
	clock   uint64 // orders releases, for least-recently-used
	trash   uint64 // names evicted directories
}

type cacheEntry struct {
	size  int64
	used  uint64
	inUse int
	// commit is the commit the directory holds checked out, as the last
	// fetch or poll found it ("" unknown: the directory is read).
	commit string
	// measured: size is the directory's as it is (no fetch since it was
	// measured), so a release need not walk it again.
	measured bool
}

// NewCache returns the cache of root with a budget of maxBytes (0 takes
// DefaultMaxCacheBytes, negative is no budget). Directories left by an
// earlier process are counted, as used before any new one.
func NewCache(root string, maxBytes int64) (*Cache, error) {
	switch {
	case maxBytes == 0:
		maxBytes = DefaultMaxCacheBytes
	case maxBytes < 0:
		maxBytes = 0
	}
	c := &Cache{root: root, max: maxBytes, entries: map[string]*cacheEntry{}}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("git cache: %w", err)
	}
	if err := c.scan(); err != nil {
		return nil, fmt.Errorf("git cache: %w", err)
	}
	return c, nil
}

// scan counts the <namespace>/<name> directories under root and finishes
// removals an earlier process left.
func (c *Cache) scan() error {
	namespaces, err := os.ReadDir(c.root)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		path := filepath.Join(c.root, ns.Name())
		if strings.HasPrefix(ns.Name(), evictedPrefix) {
			_ = os.RemoveAll(path)
			continue
		}
		if !ns.IsDir() {
			continue
		}
		repos, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, repo := range repos {
			if repo.IsDir() {
				c.entries[ns.Name()+"/"+repo.Name()] = &cacheEntry{size: dirSize(filepath.Join(path, repo.Name())), measured: true}
			}
		}
	}
	return nil
}

// Dir is the directory of the repository namespace/name.
func (c *Cache) Dir(namespace, name string) string {
	return filepath.Join(c.root, namespace, name)
}

// Acquire returns the directory of namespace/name and keeps it from
// eviction until release is called. release measures the directory
// unless nothing changed it since it was last measured (SetCheckedOut
// says), and removes the least recently used directories not in use
// until the cache fits its budget; it returns the keys
// (<namespace>/<name>) it evicted.
func (c *Cache) Acquire(namespace, name string) (dir string, release func() []string) {
	key := namespace + "/" + name
	c.mu.Lock()
	e := c.entries[key]
	if e == nil {
		e = &cacheEntry{}
		c.entries[key] = e
	}
	e.inUse++
	c.mu.Unlock()
	dir = c.Dir(namespace, name)
	return dir, func() []string {
		c.mu.Lock()
		measured, size := e.measured, e.size
		c.mu.Unlock()
		if !measured {
			size = dirSize(dir)
		}
		c.mu.Lock()
		e.inUse--
		e.size, e.measured = size, true
		c.clock++
		e.used = c.clock
		evicted, trash := c.evict(key)
		c.mu.Unlock()
		for _, t := range trash {
			_ = os.RemoveAll(t)
		}
		return evicted
	}
}

// CheckedOut is the commit the directory of namespace/name holds checked
// out as SetCheckedOut last recorded it; "" when unknown (the directory
// was not fetched or polled by this process, or a fetch into it failed).
func (c *Cache) CheckedOut(namespace, name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[namespace+"/"+name]; e != nil {
		return e.commit
	}
	return ""
}

// SetCheckedOut records the commit the directory of namespace/name holds
// checked out after a fetch or a poll, "" after a fetch that failed and
// may have left anything. Any other commit than the one recorded means the
// directory changed: its next release measures it again.
func (c *Cache) SetCheckedOut(namespace, name, commit string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[namespace+"/"+name]
	if e == nil {
		return
	}
	if commit == "" || commit != e.commit {
		e.measured = false
	}
	e.commit = commit
}

// Forget removes the directory of namespace/name (a deleted repository).
func (c *Cache) Forget(namespace, name string) {
	c.Discard(namespace, name)()
}

// Discard forgets the directory of namespace/name at once, moving it out
// of the way, and returns the removal of what it held, which may take a
// while: a caller under a lock of its own runs it after unlocking.
func (c *Cache) Discard(namespace, name string) (remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, namespace+"/"+name)
	c.trash++
	t := filepath.Join(c.root, fmt.Sprintf("%s%d", evictedPrefix, c.trash))
	if err := os.Rename(c.Dir(namespace, name), t); err != nil {
		// Not there, or not movable: never removed in place, where a
		// new user of the name may be writing by the time it runs (the
		// budget evicts what is left).
		return func() {}
	}
	return func() { _ = os.RemoveAll(t) }
}

// Size is the bytes the cache's directories held when last measured.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total()
}

func (c *Cache) total() int64 {
	var n int64
	for _, e := range c.entries {
		n += e.size
	}
	return n
}

// evict chooses idle directories other than keep (the one just used,
// which a full fetch would otherwise bring back at once), least recently
// used first, until the cache fits its budget, and renames them away under the lock (so no
// Acquire sees one half removed); the caller removes the returned trash
// after unlocking.
func (c *Cache) evict(keep string) (evicted, trash []string) {
	if c.max == 0 {
		return nil, nil
	}
	total := c.total()
	if total <= c.max {
		return nil, nil
	}
	var idle []string
	for k, e := range c.entries {
		if e.inUse == 0 && k != keep {
			idle = append(idle, k)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return c.entries[idle[i]].used < c.entries[idle[j]].used })
	for _, k := range idle {
		if total <= c.max {
			break
		}
		c.trash++
		t := filepath.Join(c.root, fmt.Sprintf("%s%d", evictedPrefix, c.trash))
		switch err := os.Rename(filepath.Join(c.root, k), t); {
		case err == nil:
			trash = append(trash, t)
		case !os.IsNotExist(err):
			continue
		}
		total -= c.entries[k].size
		delete(c.entries, k)
		evicted = append(evicted, k)
	}
	return evicted, trash
}

// minEntryBytes is what every file, directory and link takes on disk at
// least (a block of common file systems): a repository of many tiny files
// takes far more of the volume than its bytes.
const minEntryBytes = 4 << 10

// dirSize is the disk space the entries under dir take (0 when it does
// not exist): the blocks allocated where the file system says, and at
// least minEntryBytes per entry.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		size := int64(minEntryBytes)
		if info, err := d.Info(); err == nil {
			size = max(size, diskUsage(info))
		}
		n += size
		return nil
	})
	return n
}
