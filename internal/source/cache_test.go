/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import (
	"fmt"
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

// unit is the disk space one fill of n bytes takes, measured.
func unit(t *testing.T, n int) int64 {
	t.Helper()
	c, err := NewCache(t.TempDir(), -1)
	require.NoError(t, err)
	fill(t, c, "x", "y", n)
	return c.Size()
}

func TestCacheEvictsLeastRecentlyUsedIdleDirectories(t *testing.T) {
	u := unit(t, 64<<10)
	c, err := NewCache(t.TempDir(), 2*u+u/2)
	require.NoError(t, err)
	assert.Empty(t, fill(t, c, "a", "one", 64<<10))
	assert.Empty(t, fill(t, c, "b", "two", 64<<10))
	assert.Empty(t, fill(t, c, "a", "one", 64<<10), "using one again makes two the oldest")
	assert.Equal(t, []string{"b/two"}, fill(t, c, "c", "three", 64<<10))
	assert.NoDirExists(t, c.Dir("b", "two"))
	assert.DirExists(t, c.Dir("a", "one"))
	assert.Equal(t, 2*u, c.Size())
	entries, err := os.ReadDir(c.root)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), evictedPrefix, "the evicted directory is removed")
	}
}

func TestCacheNeverEvictsADirectoryInUse(t *testing.T) {
	u := unit(t, 64<<10)
	c, err := NewCache(t.TempDir(), u+u/2)
	require.NoError(t, err)
	assert.Empty(t, fill(t, c, "a", "one", 64<<10))
	dir, release := c.Acquire("a", "one")
	assert.Empty(t, fill(t, c, "b", "two", 64<<10), "a/one is in use, b/two is the one just used: over budget for now")
	assert.DirExists(t, dir)
	assert.Equal(t, []string{"b/two"}, release(), "once released, the older of the two goes")
	assert.DirExists(t, dir)
}

func TestCacheCountsDirectoriesOfAnEarlierProcess(t *testing.T) {
	u := unit(t, 64<<10)
	root := t.TempDir()
	c, err := NewCache(root, -1)
	require.NoError(t, err)
	fill(t, c, "a", "one", 64<<10)
	require.NoError(t, os.MkdirAll(filepath.Join(root, evictedPrefix+"7", "x"), 0o700))

	c, err = NewCache(root, u+u/2)
	require.NoError(t, err)
	assert.Equal(t, u, c.Size())
	assert.NoDirExists(t, filepath.Join(root, evictedPrefix+"7"), "an unfinished removal is finished")
	assert.Equal(t, []string{"a/one"}, fill(t, c, "b", "two", 64<<10))
}

func TestCacheWithoutBudgetKeepsEverything(t *testing.T) {
	u := unit(t, 1<<20)
	c, err := NewCache(t.TempDir(), -1)
	require.NoError(t, err)
	for _, name := range []string{"one", "two", "three"} {
		assert.Empty(t, fill(t, c, "a", name, 1<<20))
	}
	c.Forget("a", "two")
	assert.NoDirExists(t, c.Dir("a", "two"))
	assert.Equal(t, 2*u, c.Size())
}

// A repository of many tiny files takes a block per file and directory:
// the budget counts that, not the few bytes the files hold.
func TestCacheCountsDiskSpaceNotBytes(t *testing.T) {
	c, err := NewCache(t.TempDir(), -1)
	require.NoError(t, err)
	dir, release := c.Acquire("a", "tiny")
	for i := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", i))
		require.NoError(t, os.MkdirAll(sub, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(sub, "f"), []byte("x"), 0o600))
	}
	release()
	assert.GreaterOrEqual(t, c.Size(), int64(200*minEntryBytes), "100 directories and 100 files of one byte")
}

// A directory nothing changed since it was measured is not walked again
// at its release; a new commit checked out, or a failed fetch, has it
// measured again.
func TestCacheMeasuresADirectoryOnlyAfterItChanged(t *testing.T) {
	c, err := NewCache(t.TempDir(), -1)
	require.NoError(t, err)
	fill(t, c, "a", "one", 64<<10)
	dir := c.Dir("a", "one")
	write := func(name string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", name), make([]byte, 256<<10), 0o600))
	}
	// use records what a fetch or poll of a/one left checked out.
	use := func(commit string) int64 {
		_, release := c.Acquire("a", "one")
		c.SetCheckedOut("a", "one", commit)
		release()
		return c.Size()
	}
	before := c.Size()
	write("one")
	withOne := use("c1")
	assert.Greater(t, withOne, before, "a first commit recorded: measured")
	assert.Equal(t, "c1", c.CheckedOut("a", "one"))

	write("two")
	assert.Equal(t, withOne, use("c1"), "the same commit again (a poll of an unchanged ref): not walked")
	assert.Greater(t, use("c2"), withOne, "a new commit: walked again")

	require.NoError(t, os.Remove(filepath.Join(dir, ".git", "two")))
	assert.Equal(t, withOne, use(""), "a failed fetch: walked again")
	assert.Empty(t, c.CheckedOut("a", "one"), "after a failed fetch the commit is unknown")
}

// A directory discarded while absent is never removed later in place,
// where a new user of the name may have made it meanwhile.
func TestADiscardNeverRemovesADirectoryMadeAfterIt(t *testing.T) {
	c, err := NewCache(t.TempDir(), -1)
	require.NoError(t, err)
	remove := c.Discard("ns", "_shared-k")
	dir, release := c.Acquire("ns", "_shared-k")
	defer release()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "HEAD"), []byte("x"), 0o600))
	remove()
	_, err = os.Stat(filepath.Join(dir, "HEAD"))
	assert.NoError(t, err, "the new user's checkout stays")

	remove = c.Discard("ns", "_shared-k")
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "discarded: moved out of the way at once")
	remove()
}
