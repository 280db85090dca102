/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package install

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

var crdNames = []string{"gitrepositories.bggitops.dev", "flinkbluegreendeployments.bggitops.dev"}

// TestInstall runs the install commands of docs/install.md against a real
// kube-apiserver that has the Flink operator's CRDs (the prerequisite) and
// not yet bg-gitops': every object of config/default as a server-side
// dry-run, in apply order; then helm install of the chart for real, a
// dry-run of the chart with other values into another namespace, helm
// uninstall (which keeps the CRDs), and kubectl apply -k config/default for
// real, over which helm install refuses to install. The helm commands run
// as Helm's own install and uninstall actions (helpers_test.go), kubectl
// as bin/kubectl. No kubelet or controller-manager runs here: this shows
// what the API server accepts, not that the controller's pod starts (that
// needs an image and a container runtime).
func TestInstall(t *testing.T) {
	binary(t, "kubectl")
	env, err := testenv.Start(testenv.Options{})
	testenv.Require(t, err)
	defer env.Stop()
	ctx := context.Background()
	c := env.Client
	removeCRDs(t, c)

	t.Run("config/default dry-run", func(t *testing.T) {
		objs := configDefault(t)
		objects.Sort(objs)
		for _, u := range objs {
			require.NoError(t, objects.Apply(ctx, c, u.DeepCopy(), client.DryRunAll), "dry-run %s", key(u))
			if u.GetKind() == "Namespace" {
				// The objects in it are checked only once it exists.
				require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: u.GetName()}}))
			}
		}
	})

	t.Run("helm install", func(t *testing.T) {
		require.NoError(t, helmInstallChart(t, env.Kubeconfig, installNamespace, true), "helm install --create-namespace")
		for _, u := range helmTemplate(t, installNamespace) {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(u.GroupVersionKind())
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(u), live), "helm installed %s", key(u))
			assert.Equal(t, release, live.GetAnnotations()["meta.helm.sh/release-name"], key(u))
		}
		d := &appsv1.Deployment{}
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: "bg-gitops-controller"}, d))
		assert.Equal(t, "bg-gitops:v0.1.0", d.Spec.Template.Spec.Containers[0].Image)
		assert.Equal(t, corev1.PullIfNotPresent, d.Spec.Template.Spec.Containers[0].ImagePullPolicy)
	})

	t.Run("the chart with other values dry-run", func(t *testing.T) {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "platform"}}))
		objs := helmTemplate(t, "platform", "image.repository=registry.example/bg-gitops", "crds.install=false",
			"extraArgs={--cluster-wide-namespaces=flink-system}", "nodeSelector.pool=system",
			"tolerations[0].key=dedicated", "tolerations[0].operator=Exists",
			"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
			"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists")
		objects.Sort(objs)
		for _, u := range objs {
			require.NoError(t, objects.Apply(ctx, c, u.DeepCopy(), client.DryRunAll), "dry-run %s", key(u))
		}
	})

	t.Run("helm uninstall keeps the CRDs", func(t *testing.T) {
		helmUninstall(t, env.Kubeconfig, installNamespace)
		err := c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: "bg-gitops-controller"}, &appsv1.Deployment{})
		assert.True(t, apierrors.IsNotFound(err), "the Deployment is gone: %v", err)
		for _, name := range crdNames {
			// A deleted CRD stays until its objects are gone: kept means
			// not being deleted.
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if assert.NoError(t, c.Get(ctx, client.ObjectKey{Name: name}, crd), name) {
				assert.Nil(t, crd.DeletionTimestamp, "helm uninstall deletes %s", name)
			}
		}
	})

	t.Run("kubectl apply -k config/default", func(t *testing.T) {
		run(t, "kubectl", "--kubeconfig", env.Kubeconfig, "apply", "-k", root+"/config/default")
		d := &appsv1.Deployment{}
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: "bg-gitops-controller"}, d))
		assert.Equal(t, "bg-gitops:v0.1.0", d.Spec.Template.Spec.Containers[0].Image)
		assert.Equal(t, corev1.PullIfNotPresent, d.Spec.Template.Spec.Containers[0].ImagePullPolicy)
		for _, u := range configDefault(t) {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(u.GroupVersionKind())
			assert.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(u), live), "kubectl applied %s", key(u))
		}
	})

	t.Run("helm does not take over what kubectl installed", func(t *testing.T) {
		err := helmInstallChart(t, env.Kubeconfig, installNamespace, false)
		require.Error(t, err, "helm installed over config/default")
		assert.Contains(t, err.Error(), "exists and cannot be imported into the current release")
	})
}

// removeCRDs takes testenv's bggitops.dev CRDs away, so the install starts
// from a cluster without bg-gitops, and waits until the API server no
// longer has them.
func removeCRDs(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	for _, name := range crdNames {
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
		require.NoError(t, client.IgnoreNotFound(c.Delete(ctx, crd)))
	}
	require.Eventually(t, func() bool {
		for _, name := range crdNames {
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "the CRDs are deleted")
}
