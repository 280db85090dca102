/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
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

// childIngressManifest is fbgdManifest whose template carries spec.ingress.
func childIngressManifest(ingress string) string {
	return strings.Replace(fbgdManifest("flink:1.20.0", ""), "flinkVersion: v1_20\n", "flinkVersion: v1_20\n      ingress: "+ingress+"\n", 1)
}

// TestAChildIngressOutsideThePlatformPolicyIsNeverWritten: the Flink
// operator writes a child's own spec.ingress with its rights, so the
// platform's host patterns and annotation list hold for it too: a
// FlinkBlueGreenDeployment whose children would claim another namespace's
// host, or carry an annotation outside the list, is refused when applied
// (nothing applied, the reason says why); one made by hand gets no such
// child, and a running job asked to take one keeps running.
func TestAChildIngressOutsideThePlatformPolicyIsNeverWritten(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true, Tenancy: reconcile.Tenancy{Ingress: reconcile.IngressPolicy{
		HostPatterns: []string{"*.{{namespace}}.apps.example.com"}, Annotations: []string{"nginx.ingress.kubernetes.io/rewrite-target"}}}})
	f := newGitFixture(t, ns)
	f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"),
		"job.yaml": childIngressManifest(`{template: "{{name}}.victim.apps.example.com"}`)})
	f.create("s3cr3t-pass")
	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "--ingress-host-pattern")
	assert.Equal(t, "IngressHostNotAllowed", c.Reason)
	assert.Contains(t, c.Message, "blue-job-blue.victim.apps.example.com")
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, &v1alpha1.FlinkBlueGreenDeployment{})
	assert.True(t, apierrors.IsNotFound(err), "nothing applied: %v", err)

	f.push(map[string]string{"job.yaml": childIngressManifest(
		`{template: "{{name}}.{{namespace}}.apps.example.com", annotations: {nginx.ingress.kubernetes.io/server-snippet: "return 200;"}}`)})
	f.requestReconcile()
	c = f.waitCondition(v1alpha1.ApplyFailedCondition, "server-snippet")
	assert.Equal(t, "IngressAnnotationsNotAllowed", c.Reason)

	byHand := fbgdObject(t, ns, "by-hand", 1, "flink:1.20.0", "")
	byHand.Spec.Template.Spec.Ingress = &apiextensionsv1.JSON{Raw: []byte(`{"template":"{{name}}.` + ns + `.apps.example.com"}`)}
	require.NoError(t, env.Client.Create(ctx, byHand))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "by-hand", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	update(t, ns, "by-hand", 2, "flink:1.20.0", "", func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Ingress = &apiextensionsv1.JSON{Raw: []byte(`{"template":"{{name}}.victim.apps.example.com"}`)}
	})
	eventually(t, ns, "the rollout refused", func() bool {
		return strings.Contains(getFBGD(t, ns, "by-hand").Status.Error, "IngressHostNotAllowed")
	})
	eventuallyWarned(t, ns, "by-hand", "IngressHostNotAllowed")
	_, ok := child(ns, "by-hand-green")
	assert.False(t, ok, "no child claims another namespace's host")
	st := getFBGD(t, ns, "by-hand").Status
	assert.Equal(t, v1alpha1.ActiveBlue, st.BlueGreenState)
	assert.True(t, st.RolloutFailedJobRunning(), "the rollout failed, blue keeps running: %s %s", st.JobStatus.State, st.ActiveJobState)
}

// TestAChildIngressNeedsTheNamespacesIngressOptIn: a namespace whose
// applier may not write Ingresses (the shipped applier role) cannot get
// one through a child's spec.ingress either; bound to
// bg-gitops-ingress-applier, it can.
func TestAChildIngressNeedsTheNamespacesIngressOptIn(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startControllerWithOptions(t, ns, reconcile.Options{AllowInsecureHTTP: true})
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bg-gitops-applier", Namespace: ns}}))
	grant(t, ns, "bg-gitops-applier", "applier", shippedRules(t, "applier_role.yaml")...)
	f := newGitFixture(t, ns)
	rev := f.push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "job.yaml"),
		"job.yaml": childIngressManifest(`{template: "{{name}}.flink.example.com"}`)})
	f.create("s3cr3t-pass", func(gr *v1alpha1.GitRepository) { gr.Spec.ServiceAccountName = "bg-gitops-applier" })
	c := f.waitCondition(v1alpha1.ApplyFailedCondition, "bg-gitops-ingress-applier")
	assert.Equal(t, "IngressNotAllowed", c.Reason)

	grant(t, ns, "bg-gitops-applier", "ingress", shippedRules(t, "ingress_applier_role.yaml")...)
	f.requestReconcile()
	f.waitApplied(rev)
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
}
