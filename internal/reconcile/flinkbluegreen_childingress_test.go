/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

func withChildIngress(p *v1alpha1.FlinkBlueGreenDeployment) {
	p.Spec.Template.Spec.Ingress = &apiextensionsv1.JSON{Raw: []byte(`{"template":"{{name}}.flink.example.com","className":"nginx"}`)}
}

func restServiceOf(ns, fd string) (*corev1.Service, bool) {
	svc := &corev1.Service{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: flinksim.RestServiceName(fd)}, svc)
	return svc, err == nil
}

// TestColoursCarryTheirIngressAndRestService: each colour gets its
// prefixed ingress template and (from the simulator) its REST Service;
// the prefix never looks like a spec change; the transition's savepoint is
// taken in the format the template asks for.
func TestColoursCarryTheirIngressAndRestService(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	const conf = `, "kubernetes.operator.savepoint.format.type": "native"`
	p := fbgdObject(t, ns, "job", 1, "flink:1.20.0", conf)
	withChildIngress(p)
	require.NoError(t, env.Client.Create(context.Background(), p))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))

	blue, _ := child(ns, "job-blue")
	assert.Equal(t, "blue-{{name}}.flink.example.com", nested(blue, "spec", "ingress", "template"))
	svc, ok := restServiceOf(ns, "job-blue")
	require.True(t, ok, "job-blue-rest")
	assert.Equal(t, int32(8081), svc.Spec.Ports[0].Port)
	assert.Equal(t, blue.GetUID(), svc.OwnerReferences[0].UID)

	// Many reconciles (the reschedule interval is 200ms) leave blue alone.
	time.Sleep(time.Second)
	again, _ := child(ns, "job-blue")
	assert.Equal(t, blue.GetGeneration(), again.GetGeneration(), "blue was not changed")
	assert.Nil(t, getFBGD(t, ns, "job").Status.Savepoint, "no transition started")

	update(t, ns, "job", 2, "flink:1.20.1", conf, withChildIngress)
	eventually(t, ns, "ACTIVE_GREEN", state(t, ns, "job", v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	green, _ := child(ns, "job-green")
	assert.Equal(t, "green-{{name}}.flink.example.com", nested(green, "spec", "ingress", "template"))
	_, ok = restServiceOf(ns, "job-green")
	assert.True(t, ok, "job-green-rest")
	eventually(t, ns, "job-blue-rest deleted", func() bool { _, ok := restServiceOf(ns, "job-blue"); return !ok })

	snaps := &unstructured.UnstructuredList{}
	snaps.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	require.NoError(t, env.Client.List(context.Background(), snaps, client.InNamespace(ns)))
	require.Len(t, snaps.Items, 1)
	assert.Equal(t, "NATIVE", nested(&snaps.Items[0], "spec", "savepoint", "formatType"))
}
