/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// controllermanager.go: startControllerManager: kube-controller-manager
// with the garbage collector and the namespace controller, ready once it
// cascades a deletion.

package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/testing/testenv/process"
)

// controllers are the kube-controller-manager controllers a deletion
// needs: ownerReference cascades and namespace deletion.
const controllers = "garbage-collector-controller,namespace-controller"

// controllerManagerReady bounds the wait for the garbage collector's first
// cascade (its informers start after discovery of every resource).
const controllerManagerReady = 90 * time.Second

// startControllerManager runs kube-controller-manager with the garbage
// collector and the namespace controller against the API server, as the
// administrator, and waits until the garbage collector cascades. It starts
// after the CRDs are installed: the garbage collector discovers resources
// added later only at its next resync (30 s).
func (e *Env) startControllerManager() error {
	path := filepath.Join(e.BinDir, "kube-controller-manager")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("kube-controller-manager not found in %s: %w", e.BinDir, ErrBinaryMissing)
	}
	var err error
	e.controllerManager, err = process.Start(process.Spec{
		Name: "kube-controller-manager", Path: path, Log: filepath.Join(e.dir, "kube-controller-manager.log"),
		Args: []string{
			"--kubeconfig", e.Kubeconfig,
			"--controllers", controllers,
			"--leader-elect=false",
			// Nothing scrapes it: no serving port, no delegated authn.
			"--secure-port=0",
		},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), controllerManagerReady)
	defer cancel()
	if err := e.waitCascade(ctx); err != nil {
		return fmt.Errorf("kube-controller-manager: %w; its log ends:\n%s", err, tail(e.controllerManager.Log(), 2048))
	}
	return nil
}

// waitCascade deletes an owner ConfigMap and waits until the garbage
// collector deletes its dependent.
func (e *Env) waitCascade(ctx context.Context) error {
	ns := metav1.NamespaceDefault
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-probe-owner-", Namespace: ns}}
	if err := e.Client.Create(ctx, owner); err != nil {
		return err
	}
	dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-probe-", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
	if err := e.Client.Create(ctx, dep); err != nil {
		return err
	}
	if err := e.Client.Delete(ctx, owner); err != nil {
		return err
	}
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-e.controllerManager.Done():
			return false, fmt.Errorf("exited: %v", e.controllerManager.ExitErr())
		default:
		}
		err := e.Client.Get(ctx, client.ObjectKeyFromObject(dep), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("the garbage collector did not delete a dependent of a deleted owner: %w", err)
	}
	return nil
}

// tail is the last n bytes of the file at path ("" when unreadable).
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
