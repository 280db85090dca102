/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// restservice.go: the REST Service of a Flink cluster (RestServiceName),
// applied and deleted with its FlinkDeployment.

package flinksim

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// The REST Service of a Flink cluster, as Flink's native Kubernetes
// integration names it (Constants, ExternalServiceDecorator).
const (
	restServiceSuffix = "-rest"
	restPortName      = "rest"
	defaultRestPort   = 8081
	fieldOwner        = "flinksim"
)

// RestServiceName is the name of the REST Service of FlinkDeployment name.
func RestServiceName(name string) string { return name + restServiceSuffix }

// restService is the REST Service of d's cluster as Flink creates it: port
// "rest" on rest.port, selecting the JobManager pod. Flink makes the
// JobManager Deployment its owner, which the FlinkDeployment owns; the
// simulator runs no pods, so the FlinkDeployment owns it directly and the
// Service still goes with it. The target port is rest.port, as Flink's
// rest.bind-port defaults to it.
func restService(d deployment) *corev1ac.ServiceApplyConfiguration {
	name, port := d.GetName(), restPort(d)
	labels := map[string]string{"type": clusterType(d), "app": name}
	selector := map[string]string{"type": clusterType(d), "app": name, "component": "jobmanager"}
	owner := metav1ac.OwnerReference().WithAPIVersion(v1alpha1.FlinkDeploymentGVK.GroupVersion().String()).
		WithKind(v1alpha1.FlinkDeploymentGVK.Kind).WithName(name).WithUID(d.GetUID()).WithController(true)
	return corev1ac.Service(RestServiceName(name), d.GetNamespace()).
		WithLabels(labels).
		WithOwnerReferences(owner).
		WithSpec(corev1ac.ServiceSpec().WithType(corev1.ServiceTypeClusterIP).WithSelector(selector).
			WithPorts(corev1ac.ServicePort().WithName(restPortName).WithProtocol(corev1.ProtocolTCP).
				WithPort(port).WithTargetPort(intstr.FromInt32(port))))
}

// clusterType is the "type" label Flink puts on a cluster's resources.
func clusterType(d deployment) string {
	if d.str("spec", "mode") == "standalone" {
		return "flink-standalone-kubernetes"
	}
	return "flink-native-kubernetes"
}

// restPort is flinkConfiguration rest.port; Flink's default when unset or
// not a port (Flink would not start; the simulator has no REST to break).
func restPort(d deployment) int32 {
	p, err := strconv.ParseInt(configValue(d.Unstructured, "rest.port"), 10, 32)
	if err != nil || p < 1 || p > 65535 {
		return defaultRestPort
	}
	return int32(p)
}

// applyRestService creates or updates d's REST Service. Server-side apply
// needs no read, so the simulator neither caches nor watches Services.
func (s *Simulator) applyRestService(ctx context.Context, d deployment) error {
	return s.client.Apply(ctx, restService(d), client.FieldOwner(fieldOwner), client.ForceOwnership)
}

// deleteRestService removes d's REST Service, as the operator's removal of
// the JobManager Deployment does on suspend and on deletion. It does not
// wait for the garbage collector, which envtest does not run.
func (s *Simulator) deleteRestService(ctx context.Context, d deployment) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: d.GetNamespace(), Name: RestServiceName(d.GetName())}}
	return client.IgnoreNotFound(s.client.Delete(ctx, svc))
}
