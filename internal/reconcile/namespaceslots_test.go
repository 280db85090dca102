/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

func slotKey(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// woken returns the objects woken so far.
func woken(s *namespaceSlots) []types.NamespacedName {
	var out []types.NamespacedName
	for {
		select {
		case e := <-s.wake:
			out = append(out, slotKey(e.Object.GetNamespace(), e.Object.GetName()))
		default:
			return out
		}
	}
}

// TestNamespaceSlotsWakeTheWaitingOnRelease: an object refused a slot is
// woken as soon as one is released (not after busyRetry), the longest
// waiting of the releasing namespace first, each once.
func TestNamespaceSlotsWakeTheWaitingOnRelease(t *testing.T) {
	s := newNamespaceSlots(3, 0)
	r1, ok := s.acquire(slotKey("a", "1"))
	require.True(t, ok)
	r2, ok := s.acquire(slotKey("a", "2"))
	require.True(t, ok)
	for _, k := range []types.NamespacedName{slotKey("a", "3"), slotKey("a", "4"), slotKey("a", "3")} {
		_, ok = s.acquire(k)
		assert.False(t, ok)
	}
	assert.Empty(t, woken(s))
	r1()
	assert.Equal(t, []types.NamespacedName{slotKey("a", "3")}, woken(s))
	r3, ok := s.acquire(slotKey("a", "3"))
	require.True(t, ok)
	r2()
	r3()
	assert.Equal(t, []types.NamespacedName{slotKey("a", "4")}, woken(s), "a/3 took its slot: it waits no longer")
	assert.Empty(t, s.waiting)
}

func TestNamespaceSlotsLeaveAWorkerToOtherNamespaces(t *testing.T) {
	s := newNamespaceSlots(4, 0)
	take := func(ns string) bool {
		_, ok := s.acquire(types.NamespacedName{Namespace: ns, Name: "x"})
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
	release, ok := s.acquire(slotKey("a", "x"))
	require.True(t, ok)
	_, ok = s.acquire(slotKey("a", "x"))
	assert.False(t, ok, "one per namespace with two workers")
	release()
	_, ok = s.acquire(slotKey("a", "x"))
	assert.True(t, ok)
	assert.Equal(t, 1, s.total)
}

func TestNamespaceSlotsUnbounded(t *testing.T) {
	s := newNamespaceSlots(2, -1)
	for range 5 {
		_, ok := s.acquire(slotKey("a", "x"))
		assert.True(t, ok)
	}
	var none *namespaceSlots
	_, ok := none.acquire(slotKey("a", "x"))
	assert.True(t, ok)
}
