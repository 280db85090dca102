/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fill writes n bytes into the directory of ns/name while it is acquired,
// and returns what its release evicted.
func fill(t *testing.T, c *Cache, ns, name string, n int) []string {
	t.Helper()
	dir, release := c.Acquire(ns, name)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "pack"), make([]byte, n), 0o600))
	return release()
}

func TestCacheEvictsLeastRecentlyUsedIdleDirectories(t *testing.T) {
	c, err := NewCache(t.TempDir(), 1000)
	require.NoError(t, err)
	assert.Empty(t, fill(t, c, "a", "one", 400))
	assert.Empty(t, fill(t, c, "b", "two", 400))
	assert.Empty(t, fill(t, c, "a", "one", 400), "using one again makes two the oldest")
	assert.Equal(t, []string{"b/two"}, fill(t, c, "c", "three", 400))
	assert.NoDirExists(t, c.Dir("b", "two"))
	assert.DirExists(t, c.Dir("a", "one"))
	assert.EqualValues(t, 800, c.Size())
	entries, err := os.ReadDir(c.root)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), evictedPrefix, "the evicted directory is removed")
	}
}

func TestCacheNeverEvictsADirectoryInUse(t *testing.T) {
	c, err := NewCache(t.TempDir(), 1000)
	require.NoError(t, err)
	assert.Empty(t, fill(t, c, "a", "one", 600))
	dir, release := c.Acquire("a", "one")
	assert.Empty(t, fill(t, c, "b", "two", 600), "a/one is in use, b/two is the one just used: over budget for now")
	assert.DirExists(t, dir)
	assert.Equal(t, []string{"b/two"}, release(), "once released, the older of the two goes")
	assert.DirExists(t, dir)
}

func TestCacheCountsDirectoriesOfAnEarlierProcess(t *testing.T) {
	root := t.TempDir()
	c, err := NewCache(root, -1)
	require.NoError(t, err)
	fill(t, c, "a", "one", 700)
	require.NoError(t, os.MkdirAll(filepath.Join(root, evictedPrefix+"7", "x"), 0o700))

	c, err = NewCache(root, 1000)
	require.NoError(t, err)
	assert.EqualValues(t, 700, c.Size())
	assert.NoDirExists(t, filepath.Join(root, evictedPrefix+"7"), "an unfinished removal is finished")
	assert.Equal(t, []string{"a/one"}, fill(t, c, "b", "two", 700))
}

func TestCacheWithoutBudgetKeepsEverything(t *testing.T) {
	c, err := NewCache(t.TempDir(), -1)
	require.NoError(t, err)
	for _, name := range []string{"one", "two", "three"} {
		assert.Empty(t, fill(t, c, "a", name, 1<<20))
	}
	c.Forget("a", "two")
	assert.NoDirExists(t, c.Dir("a", "two"))
	assert.EqualValues(t, 2<<20, c.Size())
}
