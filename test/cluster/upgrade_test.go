/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// upgrade_test.go: kubectl apply -k with a newer image upgrades the
// controller without touching the job it runs.

package cluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/manager"
)

// upgradeKeepsTheJobRunning: the overlay's image tag moved to a newer
// build and re-applied (docs/install.md: "An upgrade is the same kubectl
// apply -k"), the Deployment rolls its pod over to the newer image, which
// takes the Lease and reconciles (`bg-gitops reconcile gitrepository
// --wait` returns), while the job stays ACTIVE_GREEN and RUNNING on the
// same green FlinkDeployment, at the same generation: the new controller
// redeploys nothing.
func upgradeKeepsTheJobRunning(ctx context.Context, t *testing.T, in *installation) {
	c := in.c
	green := &unstructured.Unstructured{}
	green.SetGroupVersionKind(schema.GroupVersionKind{Group: "flink.apache.org", Version: "v1beta1", Kind: "FlinkDeployment"})
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "orders-green"}, green); err != nil {
		t.Fatal(err)
	}
	in.kustomization = strings.Replace(in.kustomization, "newTag: "+tag+"\n", "newTag: "+newerTag+"\n", 1)
	writeFile(t, filepath.Join(in.overlay, "kustomization.yaml"), in.kustomization)
	start := time.Now()
	run(ctx, t, in.kubectl, "apply", "-k", in.overlay, "--kubeconfig", c.Kubeconfig())

	var pod corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := c.Client().List(ctx, pods, client.InNamespace(namespace),
			client.MatchingLabels{manager.NameLabel: manager.NameLabelValue}); err != nil {
			return false, err
		}
		if len(pods.Items) != 1 {
			return false, nil
		}
		pod = pods.Items[0]
		return pod.Spec.Containers[0].Image == "bg-gitops:"+newerTag && pod.Status.Phase == corev1.PodRunning && podReady(&pod), nil
	})
	if err != nil {
		t.Fatalf("no Ready pod of bg-gitops:%s alone: %v\n%s", newerTag, err, controllerLogs(ctx, in))
	}
	waitLeader(ctx, t, in, pod.Name)
	t.Logf("pod %s of %s leads %s after the apply", pod.Name, newerTag, time.Since(start).Round(100*time.Millisecond))
	run(ctx, t, in.bin, "reconcile", "gitrepository", "jobs", "-n", tenant, "--wait", "--kubeconfig", c.Kubeconfig())
	if out := run(ctx, t, in.bin, "version", "--kubeconfig", c.Kubeconfig()); !controllerLineNames(out, newerTag) {
		t.Errorf("bg-gitops version does not name %s:\n%s", newerTag, out)
	}

	fbgd := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "orders"}, fbgd); err != nil {
		t.Fatal(err)
	}
	if st := fbgd.Status; st.BlueGreenState != v1alpha1.ActiveGreen || st.JobStatus.State != v1alpha1.JobRunning || st.ActiveDeployment != "orders-green" {
		t.Errorf("orders after the upgrade: %s, job %s on %s", st.BlueGreenState, st.JobStatus.State, st.ActiveDeployment)
	}
	now := green.DeepCopy()
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "orders-green"}, now); err != nil {
		t.Fatal(err)
	}
	if now.GetUID() != green.GetUID() || now.GetGeneration() != green.GetGeneration() {
		t.Errorf("orders-green was redeployed: uid %s generation %d, before %s %d", now.GetUID(), now.GetGeneration(), green.GetUID(), green.GetGeneration())
	}
	if state, _, _ := unstructured.NestedString(now.Object, "status", "jobStatus", "state"); state != "RUNNING" {
		t.Errorf("orders-green's job is %s", state)
	}
}
