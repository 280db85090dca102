/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package plane_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/plane"
	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// A killed API server and a killed etcd come back on the same ports, data
// and credentials: what was written before is read with the same client.
func TestKillAndRestartKeepsDataAndCredentials(t *testing.T) {
	ctx := context.Background()
	p, err := plane.Start(ctx, plane.Options{Dir: t.TempDir()})
	testenv.Require(t, err)
	defer p.Stop()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}, Data: map[string]string{"a": "b"}}
	if err := p.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := p.APIServer.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Etcd.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.StartEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := p.Client.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatalf("read after restart: %v", err)
	}
	if got.Data["a"] != "b" {
		t.Fatalf("data lost: %v", got.Data)
	}
	if err := p.Client.List(ctx, &v1alpha1.FlinkBlueGreenDeploymentList{}); err != nil {
		t.Fatalf("CRDs gone: %v", err)
	}

	// etcd paused: the API server stays up but cannot answer reads from
	// etcd; resumed, it does again.
	if err := p.Etcd.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := p.Etcd.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if leaks := process.Leaks(); len(leaks) > 0 {
		t.Fatalf("process groups left: %v", leaks)
	}
}
