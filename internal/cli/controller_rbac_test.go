/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The controller run with the RBAC of config/rbac, as the ServiceAccount of
// config/default, with tenants onboarded (a subtest of TestControllerCommand).

package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// The namespace and ServiceAccount `kubectl apply -k config/default`
// installs the controller with.
const (
	systemNamespace   = "bg-gitops-system"
	controllerAccount = "bg-gitops-controller"
)

// testControllerGeneratedRBAC runs `bg-gitops controller` as the
// ServiceAccount of config/rbac, authenticated by a token of that account
// (so every request, impersonation included, is authorized by the API
// server exactly as in a cluster), with --leader-elect and the
// multi-tenancy flags as config/manager passes them, and two tenant
// namespaces onboarded with config/tenant. A GitRepository applies, as its
// namespace's bg-gitops-applier, a FlinkBlueGreenDeployment that rolls out
// to ACTIVE_BLUE; a kind the applier role does not grant fails visibly;
// another tenant's namespace and cluster-scoped objects are out of reach.
func testControllerGeneratedRBAC(t *testing.T, env *testenv.Env) {
	ctx := context.Background()
	installGeneratedRBAC(t, env)
	kubeconfig := serviceAccountKubeconfig(t, env, systemNamespace, controllerAccount)

	// The account is not an administrator.
	sa, err := client.New(restConfigFromKubeconfig(t, kubeconfig), client.Options{Scheme: testenv.Scheme()})
	require.NoError(t, err)
	err = sa.List(ctx, &appsv1.DeploymentList{})
	assert.True(t, apierrors.IsForbidden(err), "the controller's account may not list Deployments: %v", err)

	// Two tenants onboarded as config/tenant does it; the controller runs
	// with the multi-tenancy flags config/manager passes.
	ns, other := reconciletest.Namespace(t, env.Client), reconciletest.Namespace(t, env.Client)
	onboardTenant(t, env, ns)
	onboardTenant(t, env, other)
	shard := map[string]string{shardLabel: ns}
	// The admin lists the tenant's own account below (deployer).
	args := append([]string{"--leader-elect", "--leader-election-namespace", systemNamespace,
		"--watch-label-selector", shardLabel + "=" + ns, "--allowed-applier-accounts=bg-gitops-applier,deployer"}, shippedTenancyArgs(t)...)
	c := startControllerProcess(t, "controller", kubeconfig, args...)
	c.until(t, processTimeout, "the controller holds its Lease in "+systemNamespace, func() bool {
		return leaseHolder(t, env, systemNamespace) != "" && c.leader(t)
	})

	// A ServiceAccount of the tenant that may only write ConfigMaps, for a
	// GitRepository with spec.serviceAccountName (the controller
	// impersonates it).
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns}}},
	} {
		require.NoError(t, env.Client.Create(ctx, obj))
	}

	root := t.TempDir()
	git := gittest.ServeHTTP(t, root, gittest.HTTPOptions{})
	repo := gittest.NewRepo(t, root, "jobs")
	fbgdYAML := fbgdManifest(t, "job", shard)
	sha := repo.Commit(map[string]string{
		"app/kustomization.yaml":       "resources: [job.yaml, settings.yaml]\n",
		"app/job.yaml":                 fbgdYAML,
		"app/settings.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {value: one}\n",
		"tenant/kustomization.yaml":    "resources: [configmap.yaml]\n",
		"escape/kustomization.yaml":    "resources: [configmap.yaml]\n",
		"escape/configmap.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: escaped}\n",
		"cluster/kustomization.yaml":   "resources: [role.yaml]\n",
		"cluster/role.yaml":            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + ns + "-escaped}\nrules: []\n",
		"tenant/configmap.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tenant}\n",
		"forbidden/kustomization.yaml": "resources: [deployment.yaml]\n",
		"forbidden/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: not-granted}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: x, image: x}]}
`,
	}, "jobs")
	repo.Push("main")
	url := git.URL + "/jobs.git"
	tenant := newTestGitRepository(ns, "tenant", url, "./tenant", shard)
	tenant.Spec.ServiceAccountName = "deployer"
	escape := newTestGitRepository(ns, "escape", url, "./escape", shard)
	escape.Spec.TargetNamespace = other
	for _, gr := range []*v1alpha1.GitRepository{
		newTestGitRepository(ns, "jobs", url, "./app", shard),
		tenant,
		newTestGitRepository(ns, "forbidden", url, "./forbidden", shard),
		escape,
		newTestGitRepository(ns, "cluster", url, "./cluster", shard),
	} {
		require.NoError(t, env.Client.Create(ctx, gr))
	}

	// The generated roles are enough: fetch, apply, the blue/green rollout
	// with the simulated operator, status, events, leader election.
	rev := "main@sha1:" + sha
	c.until(t, processTimeout, "jobs Ready at "+rev, func() bool {
		gr := getTestGitRepository(t, env, ns, "jobs")
		return meta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition) && gr.Status.LastAppliedRevision == rev
	})
	assert.True(t, configMapExists(t, env, ns, "settings"))
	c.until(t, processTimeout, "job ACTIVE_BLUE", fbgdState(t, env, ns, "job", v1alpha1.ActiveBlue))
	p := getTestFBGD(t, env, ns, "job")
	assert.True(t, meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ReadyCondition), "job Ready: %+v", p.Status.Conditions)
	assert.Equal(t, rev, p.Status.ActiveRevision)
	blue, ok := flinkChild(env, ns, "job-blue")
	require.True(t, ok, "job-blue exists")
	assert.Equal(t, "RUNNING", nestedString(blue, "status", "jobStatus", "state"))

	// Impersonating the tenant's account is granted too.
	c.until(t, processTimeout, "tenant Ready", func() bool {
		gr := getTestGitRepository(t, env, ns, "tenant")
		return meta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition) && gr.Status.LastAppliedRevision == rev
	})
	assert.True(t, configMapExists(t, env, ns, "tenant"))

	// What the applier role does not grant is refused by the API server,
	// and the refusal is what the user reads: the condition and a Warning
	// event (which the controller's role lets it write).
	var msg string
	c.until(t, processTimeout, "forbidden ApplyFailed", func() bool {
		gr := getTestGitRepository(t, env, ns, "forbidden")
		cond := meta.FindStatusCondition(gr.Status.Conditions, v1alpha1.ApplyFailedCondition)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			return false
		}
		msg = cond.Message
		return !meta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition)
	})
	assert.Contains(t, msg, "forbidden")
	assert.Contains(t, msg, "system:serviceaccount:"+ns+":bg-gitops-applier", "the message names who was refused: the tenant's applier, not the controller")
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "not-granted"}, &appsv1.Deployment{})
	assert.True(t, apierrors.IsNotFound(err), "nothing applied: %v", err)
	c.until(t, processTimeout, "a Warning event for forbidden", func() bool {
		events := &eventsv1.EventList{}
		require.NoError(t, env.Client.List(ctx, events, client.InNamespace(ns)))
		for _, e := range events.Items {
			if e.Regarding.Name == "forbidden" && e.Regarding.Kind == "GitRepository" && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Note, "forbidden") {
				return true
			}
		}
		return false
	})

	// A tenant cannot write into another tenant's namespace or create
	// cluster-scoped objects, although the controller could.
	for name, want := range map[string]string{"escape": "ConfigMap/" + other + "/escaped", "cluster": "ClusterRole/" + ns + "-escaped"} {
		c.until(t, processTimeout, name+" refused", func() bool {
			cond := meta.FindStatusCondition(getTestGitRepository(t, env, ns, name).Status.Conditions, v1alpha1.ApplyFailedCondition)
			return cond != nil && cond.Status == metav1.ConditionTrue &&
				strings.Contains(cond.Message, want+": outside the GitRepository's namespace")
		})
	}
	assert.False(t, configMapExists(t, env, other, "escaped"), "nothing was written into the other tenant's namespace")
	err = env.Client.Get(ctx, client.ObjectKey{Name: ns + "-escaped"}, &rbacv1.ClusterRole{})
	assert.True(t, apierrors.IsNotFound(err), "no cluster-scoped object was created: %v", err)
}

// shippedTenancyArgs returns the multi-tenancy flags config/manager runs the
// controller with.
func shippedTenancyArgs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "deployment.yaml"))
	require.NoError(t, err)
	d := &appsv1.Deployment{}
	require.NoError(t, yaml.Unmarshal(data, d))
	var out []string
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		for _, flag := range []string{"--default-service-account", "--require-service-account", "--cluster-wide-namespaces"} {
			if strings.HasPrefix(a, flag) {
				out = append(out, a)
			}
		}
	}
	require.Contains(t, out, "--default-service-account=bg-gitops-applier", "config/manager names the tenants' applier")
	return out
}

// onboardTenant creates what config/tenant renders to, in namespace ns.
func onboardTenant(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	for _, u := range renderKustomization(t, filepath.Join("..", "..", "config", "tenant")) {
		u.SetNamespace(ns)
		if u.GetKind() == "RoleBinding" {
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, sub := range subjects {
				sub.(map[string]any)["namespace"] = ns
			}
			require.NoError(t, unstructured.SetNestedSlice(u.Object, subjects, "subjects"))
		}
		require.NoError(t, env.Client.Create(context.Background(), u), "%s %s", u.GetKind(), u.GetName())
	}
}

// renderKustomization builds dir with kustomize.
func renderKustomization(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err)
	out, err := res.AsYaml()
	require.NoError(t, err)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			require.NoError(t, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// installGeneratedRBAC creates what config/rbac renders to, in the
// namespace config/default puts it in.
func installGeneratedRBAC(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNamespace}}))
	installed := map[string]bool{}
	for _, u := range renderKustomization(t, filepath.Join("..", "..", "config", "rbac")) {
		switch u.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding":
			u.SetNamespace(systemNamespace)
		}
		installed[u.GetKind()+"/"+u.GetName()] = true
		require.NoError(t, env.Client.Create(ctx, u), "%s %s", u.GetKind(), u.GetName())
	}
	// What the controller runs with: the manager role (controller-gen),
	// the applier role, the leader election role, their bindings and the
	// account.
	for _, want := range []string{
		"ServiceAccount/" + controllerAccount,
		"ClusterRole/bg-gitops-manager", "ClusterRoleBinding/bg-gitops-manager",
		"ClusterRole/bg-gitops-applier",
		"Role/bg-gitops-leader-election", "RoleBinding/bg-gitops-leader-election",
	} {
		assert.True(t, installed[want], "config/rbac renders %s", want)
	}
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount with a token the API server issued for it.
func serviceAccountKubeconfig(t *testing.T, env *testenv.Env, ns, name string) string {
	t.Helper()
	expiry := int64(3600)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	require.NoError(t, env.Client.SubResource("token").Create(context.Background(), sa, tr))
	require.NotEmpty(t, tr.Status.Token)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name}
	cfg.CurrentContext = "default"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

func restConfigFromKubeconfig(t *testing.T, path string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	require.NoError(t, err)
	return cfg
}

// fbgdManifest is controllerTestFBGD as a file in Git: named, labelled,
// without the revision annotation (the apply stamps it).
func fbgdManifest(t *testing.T, name string, labels map[string]string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(controllerTestFBGD), &m))
	m["metadata"] = map[string]any{"name": name, "labels": labels}
	out, err := yaml.Marshal(m)
	require.NoError(t, err)
	return string(out)
}
