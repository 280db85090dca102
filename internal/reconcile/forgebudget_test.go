/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// silentForge accepts requests and never answers them; it counts them.
func silentForge(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-r.Context().Done():
		case <-gone:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(gone) })
	return srv, &requests
}

// syncingRepository is a GitRepository of ns whose sync status is due on
// forge.
func syncingRepository(ns, forge string) *v1alpha1.GitRepository {
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", Generation: 1},
		Spec: v1alpha1.GitRepositorySpec{CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "github", Address: forge,
			Repository: "org/repo", SecretRef: v1alpha1.LocalObjectReference{Name: "forge"}}}}
	gr.Status.LastAttemptedRevision = "main@sha1:" + strings.Repeat("c", 40)
	gr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Progressing"}}
	return gr
}

// TestAForgeThatNeverAnswersSpendsOnlyItsNamespacesBudget: once the
// forges of a namespace took its forge time, its posts wait (RateLimited,
// the forge not asked) instead of holding a worker; another namespace's
// posts still reach the forge.
func TestAForgeThatNeverAnswersSpendsOnlyItsNamespacesBudget(t *testing.T) {
	forge, requests := silentForge(t)
	var secrets []*corev1.Secret
	for _, ns := range []string{"a", "b"} {
		secrets = append(secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forge"}, Data: map[string][]byte{"token": []byte("t")}})
	}
	c := &CommitStatusReporter{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(secrets[0], secrets[1]).Build(),
		AllowInsecureHTTP: true, HTTP: &http.Client{}, Budget: newForgeBudget(100*time.Millisecond, time.Hour)}

	first := syncingRepository("a", forge.URL)
	require.NoError(t, c.ReportSync(context.Background(), first, nil))
	assert.Equal(t, "ForgeUnavailable", findCondition(first.Status.Conditions, v1alpha1.CommitStatusFailedCondition).Reason,
		"the call ended with the namespace's budget, not the forge")
	asked := requests.Load()
	require.NotZero(t, asked)

	again := syncingRepository("a", forge.URL)
	require.NoError(t, c.ReportSync(context.Background(), again, nil))
	cond := findCondition(again.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
	require.NotNil(t, cond)
	assert.Equal(t, "RateLimited", cond.Reason)
	assert.Contains(t, cond.Message, "namespace a")
	assert.Equal(t, asked, requests.Load(), "the budget spent: the forge was not asked again")

	other := syncingRepository("b", forge.URL)
	require.NoError(t, c.ReportSync(context.Background(), other, nil))
	assert.Greater(t, requests.Load(), asked, "namespace b's budget is its own")
}

func TestForgeBudgetIsRenewedEachWindow(t *testing.T) {
	b := newForgeBudget(time.Second, time.Minute)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	left, err := b.allow("a", start)
	require.NoError(t, err)
	assert.Equal(t, time.Second, left)
	b.spend("a", start.Add(time.Second), time.Second)
	_, err = b.allow("a", start.Add(30*time.Second))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "retry after 30s")
	left, err = b.allow("a", start.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, time.Second, left, "a new window")
	var none *forgeBudget
	_, err = none.allow("a", start)
	assert.NoError(t, err, "no budget bounds nothing")
}

// TestForgeBudgetOptionSetsTheBudget: Options.ForgeBudget
// (--forge-budget-per-namespace) is each namespace's forge time per
// minute; 0 takes the default, a negative one bounds nothing.
func TestForgeBudgetOptionSetsTheBudget(t *testing.T) {
	b := Options{ForgeBudget: 45 * time.Second}.forgeBudget()
	require.NotNil(t, b)
	assert.Equal(t, 45*time.Second, b.per)
	assert.Equal(t, time.Minute, b.window)
	assert.Equal(t, DefaultForgeBudget, Options{}.forgeBudget().per)
	assert.Nil(t, Options{ForgeBudget: -1}.forgeBudget())
}
