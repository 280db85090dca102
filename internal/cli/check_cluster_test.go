/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops check` against a control plane of its own, from empty to
// installed and back to broken.

package cli

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// TestCheck runs `bg-gitops check` against a control plane of its own,
// from empty to installed and back to broken. The controller is a real
// `bg-gitops controller` process (its Lease, its receiver, its
// status.webhookURL); what a kube-controller-manager and kubelets would
// write (the Deployments' status, the EndpointSlice) is written by the
// test, for the Deployments and the Service config/manager ships.
func TestCheck(t *testing.T) {
	env, err := testenv.Start(testenv.Options{WithoutFlinkCRDs: true})
	testenv.Require(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	sys, app := reconciletest.Namespace(t, env.Client), reconciletest.Namespace(t, env.Client)
	check := func(args ...string) result {
		return runCLI(t, append([]string{"check", "--kubeconfig", env.Kubeconfig, "--controller-namespace", sys}, args...)...)
	}

	res := check("-n", app)
	assert.Equal(t, 1, res.code, res.stdout)
	assertLines(t, res.stdout,
		"✗ Flink CRDs: FlinkDeployment, FlinkStateSnapshot not served (flink.apache.org/v1beta1)",
		"✔ bg-gitops CRD gitrepositories.bggitops.dev: the same as this CLI's",
		"✔ bg-gitops CRD flinkbluegreendeployments.bggitops.dev: the same as this CLI's",
		"✗ controller: no Deployment labelled app.kubernetes.io/name=bg-gitops in namespace "+sys,
		"? Flink operator watches "+app+": unknown (no operator found)",
		"? ServiceAccount "+app+"/flink (the jobs' account) does not exist; nothing here uses it yet")

	operator := installFlinkOperator(t, env, "kubernetes.operator.watched.namespaces: other, "+app+"\n")
	c, external := installController(t, env, sys)
	for _, sa := range []string{"flink", "bg-gitops-applier"} {
		require.NoError(t, env.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: app}}))
	}
	token := webhookRepository(t, env, c, app, external)

	res = check("-n", app)
	require.Equal(t, 0, res.code, res.stdout)
	assert.NotRegexp(t, `(?m)^[✗?]`, res.stdout, "every check passed")
	assertLines(t, res.stdout,
		"✔ Flink CRDs: FlinkDeployment and FlinkStateSnapshot served (flink.apache.org/v1beta1)",
		"✔ Flink operator 1.10.0: deployment "+operator+"/flink-kubernetes-operator, 1/1 available",
		"✔ Flink operator "+operator+"/flink-kubernetes-operator watches "+app,
		"✔ Flink operator "+operator+"/flink-kubernetes-operator reconciles FlinkStateSnapshots",
		"✔ ServiceAccount "+app+"/bg-gitops-applier (GitRepositories apply as it) exists")
	assert.Regexp(t, `(?m)^✔ controller `+sys+`/bg-gitops-controller: 1/1 available \(image bg-gitops.*\)$`, res.stdout)
	assert.Regexp(t, `(?m)^✔ leader: \S+ \(Lease `+sys+`/bg-gitops-controller-leader renewed \d+s ago\)$`, res.stdout)
	assert.Contains(t, res.stdout, "✔ receiver: Service "+sys+"/bg-gitops-receiver has 1 ready endpoint(s); external URL "+external+"\n")
	url := getTestGitRepository(t, env, app, "jobs").Status.WebhookURL
	assert.Contains(t, res.stdout, "✔ GitRepository "+app+"/jobs: webhook URL "+url+" reaches the receiver")

	// The URL shown is the one to give the forge: a push signed with the
	// token of the Secret `create secret webhook` made is accepted there.
	assert.Equal(t, http.StatusOK, signedPush(t, url, token))

	// The operator no longer watches the namespace; the jobs' account is
	// gone while a job (naming no account) needs it.
	setOperatorConfig(t, env, operator, "kubernetes.operator.watched.namespaces: other\n")
	require.NoError(t, env.Client.Delete(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "flink", Namespace: app}}))
	job := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.Unmarshal([]byte(manualFBGD), job))
	job.Namespace, job.Spec.Template.Spec.Job.State = app, v1alpha1.JobStateSuspended
	require.NoError(t, env.Client.Create(context.Background(), job))
	res = check("-n", app)
	assert.Equal(t, 1, res.code, res.stdout)
	assertLines(t, res.stdout,
		"✗ Flink operator "+operator+"/flink-kubernetes-operator watches other, not "+app,
		"    → add "+app+" to the operator's watchNamespaces (helm upgrade --reuse-values --set 'watchNamespaces={other,"+app+"}' ...; the chart then also creates the flink ServiceAccount there)",
		"✗ ServiceAccount "+app+"/flink (the jobs' account) does not exist")
	// config.yaml, which Flink reads before flink-conf.yaml, lists the
	// namespace; then the volume mounts only flink-conf.yaml.
	setOperatorFile(t, env, operator, "config.yaml", "kubernetes.operator:\n  watched.namespaces: other, "+app+"\n")
	assertLines(t, check("-n", app).stdout, "✔ Flink operator "+operator+"/flink-kubernetes-operator watches "+app,
		"✔ Flink operator "+operator+"/flink-kubernetes-operator reconciles FlinkStateSnapshots")
	// The operator's snapshot controller is off: no stateful rollout can
	// savepoint.
	setOperatorFile(t, env, operator, "config.yaml", "kubernetes.operator:\n  snapshot.resource.enabled: false\n")
	res = check()
	assert.Equal(t, 1, res.code, res.stdout)
	assertLines(t, res.stdout, "✗ Flink operator "+operator+"/flink-kubernetes-operator: kubernetes.operator.snapshot.resource.enabled is false, "+
		"its snapshot controller is off: no savepoint of a stateful rollout can be taken", "    → "+snapshotsFix)
	setOperatorFile(t, env, operator, "config.yaml", "kubernetes.operator:\n  watched.namespaces: other, "+app+"\n")
	op := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: operatorLabelValue, Namespace: operator}}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(op), op))
	op.Spec.Template.Spec.Volumes[0].ConfigMap.Items = []corev1.KeyToPath{{Key: "flink-conf.yaml", Path: "flink-conf.yaml"}}
	require.NoError(t, env.Client.Update(context.Background(), op))
	assertLines(t, check("-n", app).stdout, "✗ Flink operator "+operator+"/flink-kubernetes-operator watches other, not "+app)

	res = check()
	assert.Equal(t, 0, res.code, "without -n only the cluster is checked: %s", res.stdout)
	assert.NotContains(t, res.stdout, "ServiceAccount")

	// A stopped controller releases its Lease: no replica leads.
	require.NoError(t, c.stop(syscall.SIGTERM, 60*time.Second))
	res = check()
	assert.Equal(t, 1, res.code, res.stdout)
	assertLines(t, res.stdout, "✗ leader: Lease "+sys+"/bg-gitops-controller-leader is held by no replica")
}

func assertLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	got := strings.Split(out, "\n")
	for _, l := range lines {
		assert.Contains(t, got, l, "in:\n%s", out)
	}
}

// installFlinkOperator installs the operator's real CRDs and, as its Helm
// chart does, its Deployment (available) and configuration; it returns
// the operator's namespace.
func installFlinkOperator(t *testing.T, env *testenv.Env, conf string) string {
	t.Helper()
	ctx := context.Background()
	for _, kind := range []string{"flinkdeployments", "flinkstatesnapshots"} {
		data, err := os.ReadFile(testenv.OperatorCRD(kind))
		require.NoError(t, err)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.Unmarshal(data, crd))
		require.NoError(t, env.Client.Create(ctx, crd))
		eventually(t, kind+" established", func() bool {
			got := &apiextensionsv1.CustomResourceDefinition{}
			return env.Client.Get(ctx, client.ObjectKeyFromObject(crd), got) == nil && established(got)
		})
	}
	ns := reconciletest.Namespace(t, env.Client)
	labels := map[string]string{"app.kubernetes.io/name": operatorLabelValue}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: operatorLabelValue, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: operatorLabelValue, Image: "ghcr.io/apache/flink-kubernetes-operator:1.10.0"}},
				Volumes: []corev1.Volume{{Name: "flink-operator-config-volume", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "flink-operator-config"}}}}},
			}}}}
	createAvailable(t, env, d)
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flink-operator-config", Namespace: ns},
		Data: map[string]string{"flink-conf.yaml": conf, "log4j-operator.properties": ""}}))
	return ns
}

func setOperatorConfig(t *testing.T, env *testenv.Env, ns, conf string) {
	t.Helper()
	setOperatorFile(t, env, ns, "flink-conf.yaml", conf)
}

func setOperatorFile(t *testing.T, env *testenv.Env, ns, file, conf string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flink-operator-config", Namespace: ns}}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(cm), cm))
	cm.Data[file] = conf
	require.NoError(t, env.Client.Update(context.Background(), cm))
}

// createAvailable creates d and writes the status a kube-controller-manager
// would once its pod is available.
func createAvailable(t *testing.T, env *testenv.Env, d *appsv1.Deployment) {
	t.Helper()
	require.NoError(t, env.Client.Create(context.Background(), d))
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	require.NoError(t, env.Client.Status().Update(context.Background(), d))
}

// installController creates config/manager's Deployment (available, with
// --receiver-external-url) and receiver Service in ns, an EndpointSlice
// with a ready endpoint, and runs `bg-gitops controller` as that
// Deployment would, until it leads. It returns the process and the
// external URL.
func installController(t *testing.T, env *testenv.Env, ns string) (*controllerProcess, string) {
	t.Helper()
	addr := freeAddress(t)
	external := "http://" + addr + "/"
	for _, u := range renderKustomization(t, filepath.Join("..", "..", "config", "manager")) {
		switch u.GetKind() + "/" + u.GetName() {
		case "Deployment/bg-gitops-controller":
			d := &appsv1.Deployment{}
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d))
			d.Namespace = ns
			d.Spec.Template.Spec.Containers[0].Args = append(d.Spec.Template.Spec.Containers[0].Args, "--receiver-external-url="+external)
			createAvailable(t, env, d)
		case "Service/" + receiverService:
			u.SetNamespace(ns)
			require.NoError(t, env.Client.Create(context.Background(), u))
		}
	}
	ready, port, portName := true, int32(9292), "http"
	require.NoError(t, env.Client.Create(context.Background(), &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: receiverService + "-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: receiverService}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
	}))
	c := startControllerProcess(t, "controller", env.Kubeconfig, "--leader-elect", "--leader-election-namespace", ns,
		"--receiver-bind-address", addr, "--receiver-external-url", external)
	c.until(t, processTimeout, "the controller leads", func() bool { return leaseHolder(t, env, ns) != "" })
	return c, external
}

// webhookRepository creates a webhook Secret with `bg-gitops create
// secret webhook` and a GitRepository naming it, waits until its
// status.webhookURL answers, and returns the token.
func webhookRepository(t *testing.T, env *testenv.Env, c *controllerProcess, ns, external string) []byte {
	t.Helper()
	res := runCLI(t, "create", "secret", "webhook", "hook", "-n", ns, "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, res.code, res.stderr)
	gr := newTestGitRepository(ns, "jobs", "https://127.0.0.1:1/jobs.git", "./app", nil)
	gr.Spec.Webhook = &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "hook"}}
	require.NoError(t, env.Client.Create(context.Background(), gr))
	c.until(t, processTimeout, "status.webhookURL", func() bool {
		st := getTestGitRepository(t, env, ns, "jobs").Status
		return st.WebhookPath != "" && st.WebhookURL == strings.TrimSuffix(external, "/")+st.WebhookPath
	})
	c.until(t, processTimeout, "the receiver listens", func() bool { code, _ := httpGet(external); return code == http.StatusMethodNotAllowed })
	return readSecret(t, env, ns, "hook").Data["token"]
}

// signedPush posts a GitHub push of main to url, signed with token.
func signedPush(t *testing.T, url string, token []byte) int {
	t.Helper()
	body := []byte(`{"ref":"refs/heads/main","after":"` + strings.Repeat("b", 40) + `"}`)
	mac := hmac.New(sha256.New, token)
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-GitHub-Delivery", "check-test-1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := probeClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}
