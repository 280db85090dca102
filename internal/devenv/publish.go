/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// publish.go: publishController, which publishes the in-process controller as
// the Deployment bg-gitops-system/bg-gitops-controller for `bg-gitops check`
// and `version`.

package devenv

import (
	"context"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"bggitops.dev/bg-gitops/internal/manager"
)

// Where the in-process controller is published, as config/default installs
// the real one.
const (
	ControllerNamespace  = "bg-gitops-system"
	ControllerDeployment = "bg-gitops-controller"
)

// publishController makes the controller running inside this process
// recognisable as an installed one: `bg-gitops check` and `version` find
// the controller by its Deployment (label, image tag, available replicas,
// flags). No kubelet runs here, so nothing runs the Deployment's pod
// template; its status is written as the deployment controller would once
// the manager runs, and the container's flags say where the receiver
// really listens (127.0.0.1, which a Service's endpoints may not name).
func (e *Env) publishController(ctx context.Context, version string) error {
	labels := map[string]string{manager.NameLabel: manager.NameLabelValue}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: ControllerDeployment, Namespace: ControllerNamespace, Labels: labels,
			Annotations: map[string]string{"kubernetes.io/description": fmt.Sprintf(
				"the controller runs inside `bg-gitops dev` (PID %d); nothing runs this pod template", os.Getpid())}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "controller", Image: "bg-gitops:" + version,
					Command: []string{"bg-gitops", "dev"},
					Args: []string{"--receiver-bind-address=" + strings.TrimPrefix(e.ReceiverURL, "http://"),
						"--receiver-external-url=" + e.ReceiverURL},
				}}},
			},
		},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ControllerNamespace}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return fmt.Errorf("create namespace %s: %w", ControllerNamespace, err)
	}
	if err := e.Client.Create(ctx, d); err != nil {
		return fmt.Errorf("create deployment %s/%s: %w", ControllerNamespace, ControllerDeployment, err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1,
		ReadyReplicas: 1, AvailableReplicas: 1}
	if err := e.Client.Status().Update(ctx, d); err != nil {
		return fmt.Errorf("deployment %s/%s status: %w", ControllerNamespace, ControllerDeployment, err)
	}
	e.Logf("controller published as deployment %s/%s (image %s), for bg-gitops check and version", ControllerNamespace, ControllerDeployment, d.Spec.Template.Spec.Containers[0].Image)
	return nil
}
