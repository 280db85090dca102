/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// helm_test.go: helm install of charts/bg-gitops runs the controller in
// the cluster, and helm uninstall removes it but its CRDs.

package cluster

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const release = "bg-gitops"

// helmInstallRunsTheController: `helm install bg-gitops charts/bg-gitops
// --namespace bg-gitops-system --create-namespace --set image.tag=...`
// and the pod-security label, as docs/install.md's Helm section says, run
// the controller as config/default does: a Ready pod that holds the
// Lease, version and check pass. `helm uninstall` then removes the
// controller and leaves the CRDs (and the namespace), over which the next
// subtests install config/default.
func helmInstallRunsTheController(ctx context.Context, t *testing.T, in *installation) {
	c := in.c
	cfg := helmConfig(t, c.Kubeconfig())
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace, install.CreateNamespace = release, namespace, true
	// The defaults of helm install's flags (--wait, --timeout).
	install.WaitStrategy = kube.HookOnlyStrategy
	install.Timeout = 300 * time.Second
	vals, err := (&values.Options{Values: []string{"image.tag=" + tag}}).MergeValues(getter.Providers{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(filepath.Join(root, "charts", "bg-gitops"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := install.Run(ch, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	run(ctx, t, in.kubectl, "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted", "--kubeconfig", c.Kubeconfig())
	controllerIsReadyAndChecked(ctx, t, in)

	uninstall := action.NewUninstall(cfg)
	// The defaults of helm uninstall's flags (--wait, --timeout, --cascade).
	uninstall.WaitStrategy = kube.HookOnlyStrategy
	uninstall.Timeout = 300 * time.Second
	uninstall.DeletionPropagation = "background"
	if _, err := uninstall.Run(release); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "bg-gitops-controller"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the controller's Deployment after helm uninstall: %v", err)
	}
	// The CRDs stay (helm.sh/resource-policy: keep), not being deleted.
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"gitrepositories.bggitops.dev", "flinkbluegreendeployments.bggitops.dev"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Client().Get(ctx, client.ObjectKey{Name: name}, crd); err != nil || crd.DeletionTimestamp != nil {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("the CRDs after helm uninstall: %v", err)
	}
}

// helmConfig is what the helm command builds from --kubeconfig and
// --namespace: releases stored as Secrets (Helm's default driver).
func helmConfig(t *testing.T, kubeconfig string) *action.Configuration {
	t.Helper()
	settings := cli.New()
	settings.KubeConfig = kubeconfig
	settings.SetNamespace(namespace)
	cfg := action.NewConfiguration()
	if err := cfg.Init(settings.RESTClientGetter(), settings.Namespace(), "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}
