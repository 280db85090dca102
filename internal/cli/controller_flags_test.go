/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/reconcile"
)

// TestForgeBudgetFlagReachesTheReconcilers: --forge-budget-per-namespace
// is the reconcilers' ForgeBudget; unset, the default 20s.
func TestForgeBudgetFlagReachesTheReconcilers(t *testing.T) {
	f := &controllerFlags{}
	require.NoError(t, controllerCommand(f).Flags().Parse([]string{"--forge-budget-per-namespace=45s"}))
	assert.Equal(t, 45*time.Second, f.reconcileOptions().ForgeBudget)

	f = &controllerFlags{}
	require.NoError(t, controllerCommand(f).Flags().Parse(nil))
	assert.Equal(t, reconcile.DefaultForgeBudget, f.reconcileOptions().ForgeBudget)
	assert.Equal(t, 20*time.Second, reconcile.DefaultForgeBudget)
}
