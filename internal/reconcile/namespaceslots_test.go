/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNamespaceSlotsLeaveAWorkerToOtherNamespaces(t *testing.T) {
	s := newNamespaceSlots(4, 0)
	take := func(ns string) bool {
		_, ok := s.acquire(ns)
		return ok
	}
	assert.True(t, take("a"))
	assert.True(t, take("a"))
	assert.True(t, take("a"), "three of four workers")
	assert.False(t, take("a"), "the last worker is for other namespaces")
	assert.True(t, take("b"), "a namespace holding none may take the last worker")
	assert.False(t, take("b"), "but not a second one")

	s = newNamespaceSlots(4, 0)
	assert.True(t, take("a"))
	assert.True(t, take("b"))
	assert.True(t, take("a"))
	assert.False(t, take("a"), "two tenants together leave a worker free")
	assert.False(t, take("b"))
	assert.True(t, take("c"))
}

func TestNamespaceSlotsRelease(t *testing.T) {
	s := newNamespaceSlots(2, 0)
	release, ok := s.acquire("a")
	require.True(t, ok)
	_, ok = s.acquire("a")
	assert.False(t, ok, "one per namespace with two workers")
	release()
	_, ok = s.acquire("a")
	assert.True(t, ok)
	assert.Equal(t, 1, s.total)
}

func TestNamespaceSlotsUnbounded(t *testing.T) {
	s := newNamespaceSlots(2, -1)
	for range 5 {
		_, ok := s.acquire("a")
		assert.True(t, ok)
	}
	var none *namespaceSlots
	_, ok := none.acquire("a")
	assert.True(t, ok)
}
