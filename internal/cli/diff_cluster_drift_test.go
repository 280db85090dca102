/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests that `bg-gitops diff --cluster` reports exactly the drift the
// controller's applier re-applies.

package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// driftCase is an object as Git has it, what a hand (another field
// manager) does to the live object after the controller applied it, and
// whether that is drift: a change the controller's next apply undoes.
type driftCase struct {
	name, yaml string
	edit       func(t *testing.T, env *testenv.Env, ns, name string)
	drift      bool
}

var driftCases = []driftCase{
	{name: "cm-untouched", yaml: configMapYAML},
	{name: "cm-data-edited", yaml: configMapYAML, drift: true, edit: editConfigMap(func(cm *corev1.ConfigMap) {
		cm.Data["threshold"] = "5"
	})},
	{name: "cm-foreign-label", yaml: configMapYAML, edit: editConfigMap(func(cm *corev1.ConfigMap) {
		cm.Labels["owner"] = "someone-else" // Git does not own it: the apply keeps it
	})},
	{name: "cm-label-edited", yaml: configMapYAML, drift: true, edit: editConfigMap(func(cm *corev1.ConfigMap) {
		cm.Labels["app"] = "hand-edited"
	})},
	{name: "cm-annotation-removed", yaml: configMapYAML, drift: true, edit: editConfigMap(func(cm *corev1.ConfigMap) {
		delete(cm.Annotations, "team")
	})},
	{name: "deploy-defaulted-with-status", yaml: deploymentYAML, edit: func(t *testing.T, env *testenv.Env, ns, name string) {
		d := &appsv1.Deployment{}
		require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d))
		d.Status.ObservedGeneration, d.Status.Replicas, d.Status.ReadyReplicas = d.Generation, 2, 2
		require.NoError(t, env.Client.Status().Update(context.Background(), d, client.FieldOwner("kube-controller-manager")))
	}},
	{name: "deploy-scaled", yaml: deploymentYAML, drift: true, edit: editDeployment(func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptrTo(int32(5))
	})},
	{name: "deploy-defaulted-field-changed", yaml: deploymentYAML, edit: editDeployment(func(d *appsv1.Deployment) {
		// Git leaves imagePullPolicy to the server's default: the apply
		// does not reset a field it does not own.
		d.Spec.Template.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
	})},
	{name: "svc-defaulted", yaml: serviceYAML},
	{name: "svc-port-edited", yaml: serviceYAML, drift: true, edit: edit(&corev1.Service{}, func(s *corev1.Service) {
		s.Spec.Ports[0].TargetPort.IntVal = 9999
	})},
}

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  labels: {app: job}
  annotations: {team: data}
data: {threshold: "100"}
`

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 8080}]
`

const serviceYAML = `apiVersion: v1
kind: Service
metadata:
  labels: {app: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`

// TestDriftAgreement proves that `bg-gitops diff --cluster` reports exactly
// the drift the controller re-applies. The controller (the Applier, as the
// GitRepository reconciler calls it, with stamps and memo) applies the set;
// hands then change the live objects, in fields Git owns and in fields it
// does not, and the status, defaults, managedFields and resourceVersions
// move as they do in a cluster; one object is deleted. Then the report of
// diff --cluster and the Applier's next Apply of the same commit must name
// the same objects, and those must be the expected ones. After that apply,
// both find nothing.
func TestDriftAgreement(t *testing.T) {
	env := cluster(t)
	ctx := context.Background()
	ns := newNamespace(t, env)
	source, revision := ns+"/repo", "main@sha1:"+strings.Repeat("a", 40)

	var git []*unstructured.Unstructured
	for _, c := range append(driftCases, driftCase{name: "cm-deleted", yaml: configMapYAML}) {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(c.yaml), &u.Object), c.name)
		u.SetName(c.name)
		u.SetNamespace(ns)
		git = append(git, u)
	}
	// What the GitRepository reconciler's Renderer hands the Applier, and
	// what the CLI renders (no stamps).
	controllerSet := func() []*unstructured.Unstructured {
		out := make([]*unstructured.Unstructured, len(git))
		for i, u := range git {
			out[i] = u.DeepCopy()
			objects.Stamp(out[i], revision, source)
		}
		return out
	}
	cliHead := func() []*unstructured.Unstructured {
		out := make([]*unstructured.Unstructured, len(git))
		for i, u := range git {
			out[i] = u.DeepCopy()
		}
		return out
	}

	applier, err := apply.NewApplier(env.Config, testenv.Scheme())
	require.NoError(t, err)
	opts := apply.Options{Source: source}
	_, err = applier.Apply(ctx, controllerSet(), opts)
	require.NoError(t, err)

	for _, c := range driftCases {
		if c.edit != nil {
			c.edit(t, env, ns, c.name)
		}
	}
	gone := &corev1.ConfigMap{}
	gone.Namespace, gone.Name = ns, "cm-deleted"
	require.NoError(t, env.Client.Delete(ctx, gone))

	want := map[string]string{"cm-deleted": "new"}
	for _, c := range driftCases {
		if c.drift {
			want[c.name] = "drift"
		}
	}
	cli := cliVerdicts(t, ctx, env, cliHead())
	res, err := applier.Apply(ctx, controllerSet(), opts)
	require.NoError(t, err)
	controller := applierVerdicts(res)
	assert.Equal(t, want, cli, "diff --cluster")
	assert.Equal(t, want, controller, "controller")
	assert.Equal(t, controller, cli, "diff --cluster and the controller disagree")

	assert.Empty(t, cliVerdicts(t, ctx, env, cliHead()), "diff --cluster after the controller re-applied")
	res, err = applier.Apply(ctx, controllerSet(), opts)
	require.NoError(t, err)
	assert.Empty(t, applierVerdicts(res), "the controller after it re-applied")
}

// cliVerdicts runs the report of diff --cluster: name → "new" or "drift".
func cliVerdicts(t *testing.T, ctx context.Context, env *testenv.Env, head []*unstructured.Unstructured) map[string]string {
	t.Helper()
	rep, err := clusterReport(ctx, &diffFlags{kubeconfig: env.Kubeconfig}, head, review.Revision{Ref: "main"}, io.Discard)
	require.NoError(t, err)
	out := map[string]string{}
	for _, o := range rep.Objects {
		switch o.Change {
		case review.Added:
			out[o.Name] = "new"
		case review.Changed:
			out[o.Name] = "drift"
		default:
			t.Errorf("%s: unexpected change %q", o.ID(), o.Change)
		}
	}
	return out
}

// applierVerdicts reads what an Apply wrote: name → "new" or "drift".
func applierVerdicts(res apply.Result) map[string]string {
	out := map[string]string{}
	for _, c := range res.Changes {
		name := c.ID[strings.LastIndexByte(c.ID, '/')+1:]
		switch c.Action {
		case apply.ActionCreated:
			out[name] = "new"
		case apply.ActionConfigured:
			out[name] = "drift"
		}
	}
	return out
}

func editConfigMap(f func(*corev1.ConfigMap)) func(*testing.T, *testenv.Env, string, string) {
	return edit(&corev1.ConfigMap{}, f)
}

func editDeployment(f func(*appsv1.Deployment)) func(*testing.T, *testenv.Env, string, string) {
	return edit(&appsv1.Deployment{}, f)
}

// edit updates the live object into obj (one per case) as a hand would.
func edit[T client.Object](obj T, f func(T)) func(*testing.T, *testenv.Env, string, string) {
	return func(t *testing.T, env *testenv.Env, ns, name string) {
		require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj))
		f(obj)
		require.NoError(t, env.Client.Update(context.Background(), obj, client.FieldOwner("kubectl-edit")))
	}
}

func ptrTo[T any](v T) *T { return &v }
