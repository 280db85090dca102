/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_due_internal_test.go: which versions of an object a
// reconcile counts as already handled.

package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TestEveryVersionAReconcileWentThroughCountsAsHandled: a cache may show
// the object as the reconcile read it, after any of its status writes, or
// as it left it; each is handled until the next poll. Any other version,
// or a reconcile that failed, is not.
func TestEveryVersionAReconcileWentThroughCountsAsHandled(t *testing.T) {
	id := types.NamespacedName{Namespace: "ns", Name: "x"}
	now := time.Now()
	n := &nextRuns{}
	n.note(id, []string{"10", "11", "12"}, ctrl.Result{RequeueAfter: time.Hour}, nil, now)
	for _, rv := range []string{"10", "11", "12"} {
		wait, early := n.notYet(id, rv, now.Add(time.Second))
		assert.True(t, early, "version %s", rv)
		assert.InDelta(t, time.Hour.Seconds(), wait.Seconds(), 2)
	}
	_, early := n.notYet(id, "13", now.Add(time.Second))
	assert.False(t, early, "a version written by someone else")

	n.note(id, []string{"13", "14"}, ctrl.Result{}, assert.AnError, now)
	_, early = n.notYet(id, "13", now.Add(time.Second))
	assert.False(t, early, "a failed reconcile handled nothing")
}
