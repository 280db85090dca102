/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package flinksim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// restService reads the REST Service of fd; nil when there is none.
func restService(t *testing.T, fd *unstructured.Unstructured) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{}
	key := types.NamespacedName{Namespace: fd.GetNamespace(), Name: flinksim.RestServiceName(fd.GetName())}
	err := env.Client.Get(context.Background(), key, svc)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return svc
}

func eventuallyRestService(t *testing.T, fd *unstructured.Unstructured, exists bool) *corev1.Service {
	t.Helper()
	var svc *corev1.Service
	eventually(t, func() string {
		svc = restService(t, fd)
		return fmt.Sprint(svc != nil)
	}, fmt.Sprint(exists))
	return svc
}

// TestRestServiceOfADeployedJob: a deployed job has <name>-rest, owned by
// its FlinkDeployment, selecting its JobManager, on rest.port (flat or
// nested) or 8081.
func TestRestServiceOfADeployedJob(t *testing.T) {
	for _, tc := range []struct{ name, conf string }{
		{"restdefault", `a: b`},
		{"restflat", `rest.port: "8082"`},
		{"restnested", `rest: {port: 8082}`},
	} {
		fd := create(t, fmt.Sprintf(job, tc.name, tc.conf, ""))
		svc := eventuallyRestService(t, fd, true)
		want := int32(8082)
		if tc.name == "restdefault" {
			want = 8081
		}
		require.Len(t, svc.Spec.Ports, 1, tc.name)
		p := svc.Spec.Ports[0]
		assert.Equal(t, "rest", p.Name, tc.name)
		assert.Equal(t, want, p.Port, tc.name)
		assert.Equal(t, intstr.FromInt32(want), p.TargetPort, tc.name)
		assert.Equal(t, corev1.ServiceTypeClusterIP, svc.Spec.Type, tc.name)
		assert.Equal(t, map[string]string{"app": tc.name, "component": "jobmanager", "type": "flink-native-kubernetes"},
			svc.Spec.Selector, tc.name)
		require.Len(t, svc.OwnerReferences, 1, tc.name)
		o := svc.OwnerReferences[0]
		assert.Equal(t, "FlinkDeployment", o.Kind, tc.name)
		assert.Equal(t, "flink.apache.org/v1beta1", o.APIVersion, tc.name)
		assert.Equal(t, tc.name, o.Name, tc.name)
		assert.Equal(t, fd.GetUID(), o.UID, tc.name)
		assert.True(t, o.Controller != nil && *o.Controller, tc.name)
	}
}

// TestRestServiceGoesWithSuspendAndDeletion: a suspend removes it, a
// resume brings it back, and the deletion of the FlinkDeployment removes
// it without a garbage collector (envtest runs none).
func TestRestServiceGoesWithSuspendAndDeletion(t *testing.T) {
	fd := create(t, fmt.Sprintf(job, "restlife", `a: b`, ""))
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	eventuallyRestService(t, fd, true)

	respec(t, fd, func(obj map[string]any) { _ = unstructured.SetNestedField(obj, "suspended", "spec", "job", "state") })
	eventually(t, field(t, fd, "status", "lifecycleState"), "SUSPENDED")
	eventuallyRestService(t, fd, false)

	respec(t, fd, func(obj map[string]any) { _ = unstructured.SetNestedField(obj, "running", "spec", "job", "state") })
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	eventuallyRestService(t, fd, true)

	require.NoError(t, env.Client.Delete(context.Background(), fd))
	eventuallyRestService(t, fd, false)
}
