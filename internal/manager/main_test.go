/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The tests' control plane: one real kube-apiserver and etcd for the
// package, started by the first test that needs it.

package manager

import (
	"fmt"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var (
	clusterOnce sync.Once
	clusterEnv  *testenv.Env
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if clusterEnv != nil {
		if err := clusterEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the control plane:", err)
		}
	}
	os.Exit(code)
}

// cluster is the package's control plane.
func cluster(t *testing.T) *testenv.Env {
	t.Helper()
	clusterOnce.Do(func() { clusterEnv, clusterErr = testenv.Start(testenv.Options{}) })
	require.NoError(t, clusterErr)
	return clusterEnv
}

func newNamespace(t *testing.T, env *testenv.Env) string {
	t.Helper()
	return reconciletest.Namespace(t, env.Client)
}

// freeAddress is a free TCP address on the loopback.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}
