/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package fairqueue

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// newStrings is a queue of "namespace/name" strings.
func newStrings() *Queue[string] {
	return New("", func(s string) string { ns, _, _ := strings.Cut(s, "/"); return ns })
}

// take Gets n items without marking them Done.
func take(t *testing.T, q *Queue[string], n int) []string {
	t.Helper()
	var out []string
	for range n {
		item, shutdown := q.Get()
		require.False(t, shutdown)
		out = append(out, item)
	}
	return out
}

func TestGetTakesNamespacesInTurn(t *testing.T) {
	q := newStrings()
	for _, s := range []string{"a/1", "a/2", "a/3", "a/4", "b/1", "c/1", "c/2"} {
		q.Add(s)
	}
	assert.Equal(t, []string{"a/1", "b/1", "c/1", "a/2", "c/2", "a/3", "a/4"}, take(t, q, 7))
	assert.Equal(t, 0, q.Len())
}

func TestANamespaceHoldingAnItemWaitsWhileAnotherHoldsNone(t *testing.T) {
	q := newStrings()
	q.Add("a/1")
	q.Add("a/2")
	q.Add("a/3")
	assert.Equal(t, []string{"a/1", "a/2"}, take(t, q, 2), "alone, a namespace takes every worker")
	q.Add("b/1")
	q.Add("b/2")
	assert.Equal(t, []string{"b/1", "b/2"}, take(t, q, 2), "b holds fewer than a: its items come first")
	q.Done("b/1")
	q.Done("b/2")
	q.Add("b/3")
	assert.Equal(t, []string{"b/3", "a/3"}, take(t, q, 2), "a holds 2, b none: b's item first")
}

func TestAnItemAddedTwiceWaitsOnce(t *testing.T) {
	q := newStrings()
	q.Add("a/1")
	q.Add("b/1")
	q.Add("a/1")
	assert.Equal(t, 2, q.Len())
	assert.Equal(t, []string{"a/1", "b/1"}, take(t, q, 2))
	assert.Equal(t, 0, q.Len())
}

func TestAnItemBeingProcessedIsHandedOutAgainOnlyAfterDone(t *testing.T) {
	q := newStrings()
	q.Add("a/1")
	assert.Equal(t, []string{"a/1"}, take(t, q, 1))
	q.Add("a/1")
	q.Add("a/1")
	assert.Equal(t, 0, q.Len(), "re-added while processing: waits for Done")
	q.Add("a/2")
	assert.Equal(t, []string{"a/2"}, take(t, q, 1))
	q.Done("a/1")
	assert.Equal(t, 1, q.Len())
	assert.Equal(t, []string{"a/1"}, take(t, q, 1))
	q.Done("a/1")
	assert.Equal(t, 0, q.Len(), "taken once for both adds")
}

func TestDoneOfAnItemNotAddedAgainLeavesNothingReady(t *testing.T) {
	q := newStrings()
	q.Add("a/1")
	take(t, q, 1)
	q.Done("a/1")
	q.Done("a/1") // a second Done changes nothing
	assert.Equal(t, 0, q.Len())
	q.Add("b/1")
	q.Add("a/2")
	assert.Equal(t, []string{"b/1", "a/2"}, take(t, q, 2), "a's hold ended with its Done")
}

func TestGetBlocksUntilAnItemIsAdded(t *testing.T) {
	q := newStrings()
	got := make(chan string)
	go func() {
		item, _ := q.Get()
		got <- item
	}()
	q.Add("a/1")
	assert.Equal(t, "a/1", <-got)
}

func TestShutDownHandsOutWhatIsReadyThenReportsShutdown(t *testing.T) {
	q := newStrings()
	q.Add("a/1")
	q.ShutDown()
	q.Add("a/2")
	assert.True(t, q.ShuttingDown())
	item, shutdown := q.Get()
	assert.Equal(t, "a/1", item)
	assert.False(t, shutdown)
	_, shutdown = q.Get()
	assert.True(t, shutdown, "a/2 was added after ShutDown: dropped")
}

func TestShutDownWakesAWaitingGet(t *testing.T) {
	q := newStrings()
	done := make(chan bool)
	go func() {
		_, shutdown := q.Get()
		done <- shutdown
	}()
	q.ShutDown()
	assert.True(t, <-done)
}

func TestShutDownWithDrainReturnsOnceEveryItemIsDone(t *testing.T) {
	q := newStrings()
	q.Add("a/1")
	q.Add("b/1")
	take(t, q, 2)
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	q.Done("a/1")
	select {
	case <-drained:
		t.Fatal("drained while b/1 is processed")
	default:
	}
	q.Done("b/1")
	<-drained
	assert.True(t, q.ShuttingDown())
}

// TestWorkersAreSharedOneEachWhileNamespacesWait: four workers, a
// namespace whose items never finish and two others with one each; the
// others are each handed a worker although a's items came first.
func TestWorkersAreSharedOneEachWhileNamespacesWait(t *testing.T) {
	q := newStrings()
	for i := range 8 {
		q.Add("a/" + string(rune('0'+i)))
	}
	q.Add("b/1")
	q.Add("c/1")
	got := take(t, q, 4) // four workers, none finishes
	assert.ElementsMatch(t, []string{"a/0", "b/1", "c/1", "a/1"}, got)
}

func reqOf(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func TestRequestQueueCountsRequeuesUntilForget(t *testing.T) {
	q := ForRequests("", workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Hour, time.Hour))
	defer q.ShutDown()
	r := reqOf("a", "1")
	q.AddRateLimited(r)
	q.AddRateLimited(r)
	assert.Equal(t, 2, q.NumRequeues(r))
	assert.Equal(t, 0, q.Len(), "rate limited: not ready yet")
	q.Forget(r)
	assert.Equal(t, 0, q.NumRequeues(r))
}

func TestRequestQueueHandsOutADelayedItemOnceItIsDue(t *testing.T) {
	q := ForRequests("", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	q.AddAfter(reqOf("b", "1"), time.Millisecond)
	item, shutdown := q.Get()
	assert.False(t, shutdown)
	assert.Equal(t, reqOf("b", "1"), item)
}

func TestRequestQueueEndsANamespacesHoldOnDone(t *testing.T) {
	q := ForRequests("", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	q.Add(reqOf("a", "1"))
	item, _ := q.Get()
	q.Done(item)
	q.Add(reqOf("a", "2"))
	q.Add(reqOf("b", "1"))
	item, _ = q.Get()
	assert.Equal(t, reqOf("a", "2"), item, "a holds nothing since Done: its turn came first")
}

// TestRandomOperationsKeepTheQueueContract runs random Adds, Gets and
// Dones against a model: Len is the number of items added and not taken
// since (each once), Get hands out only such an item, never one being
// processed, and always one of a namespace holding no more items than any
// other namespace that waits.
func TestRandomOperationsKeepTheQueueContract(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := newStrings()
	waiting, processing, dirtyWhileProcessing := map[string]bool{}, map[string]bool{}, map[string]bool{}
	held := map[string]int{}
	nsOf := func(s string) string { ns, _, _ := strings.Cut(s, "/"); return ns }
	for step := range 5000 {
		switch op := rng.IntN(3); {
		case op == 0:
			item := fmt.Sprintf("%c/%d", 'a'+rng.IntN(3), rng.IntN(4))
			q.Add(item)
			if processing[item] {
				dirtyWhileProcessing[item] = true
			} else {
				waiting[item] = true
			}
		case op == 1 && len(waiting) > 0:
			item, _ := q.Get()
			require.True(t, waiting[item], "step %d: %s was not waiting", step, item)
			require.False(t, processing[item], "step %d: %s handed out twice", step, item)
			for other := range waiting {
				require.LessOrEqual(t, held[nsOf(item)], held[nsOf(other)], "step %d: %s before %s", step, item, other)
			}
			delete(waiting, item)
			processing[item] = true
			held[nsOf(item)]++
		case op == 2 && len(processing) > 0:
			var item string
			for item = range processing {
				break
			}
			q.Done(item)
			delete(processing, item)
			held[nsOf(item)]--
			if dirtyWhileProcessing[item] {
				delete(dirtyWhileProcessing, item)
				waiting[item] = true
			}
		}
		require.Equal(t, len(waiting), q.Len(), "step %d", step)
	}
}
