/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Unit tests of the checks of `bg-gitops check`: the operator's options, versions,
// CRD drift, the controller's flags and the report.

package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"bggitops.dev/bg-gitops/internal/scheme"
)

func TestParseWatched(t *testing.T) {
	for _, tc := range []struct {
		name, conf string
		want       []string
	}{
		{"unset", "kubernetes.operator.reconcile.interval: 15 s\n", nil},
		{"flat", "kubernetes.operator.watched.namespaces: flink, other\n", []string{"flink", "other"}},
		{"quoted", `kubernetes.operator.watched.namespaces: "flink"` + "\n", []string{"flink"}},
		{"all", "kubernetes.operator.watched.namespaces: JOSDK_ALL_NAMESPACES\n", nil},
		{"empty", "kubernetes.operator.watched.namespaces:\n", nil},
		{"nested", "kubernetes:\n  operator:\n    watched:\n      namespaces: a,b\n", []string{"a", "b"}},
		{"nested list", "kubernetes:\n  operator.watched.namespaces: [a, b]\n", []string{"a", "b"}},
		{"not YAML", "kubernetes.operator.watched.namespaces: a\n\tbad: [\n", []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, parseWatched(tc.conf)) })
	}
}

func TestOperatorImageAndVersion(t *testing.T) {
	d := func(image string, labels map[string]string) *appsv1.Deployment {
		dep := &appsv1.Deployment{}
		dep.Labels = labels
		dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar", Image: "busybox:1"}, {Name: "op", Image: image}}
		return dep
	}
	for _, tc := range []struct {
		image   string
		labels  map[string]string
		found   bool
		version string
	}{
		{"ghcr.io/apache/flink-kubernetes-operator:1.10.0", nil, true, "1.10.0"},
		{"registry:5000/mirror/flink-kubernetes-operator@sha256:abc", map[string]string{"app.kubernetes.io/version": "1.11.0"}, true, "1.11.0"},
		{"flink-kubernetes-operator", nil, true, "unknown"},
		{"example/flink-kubernetes-operator-fork:1", nil, false, ""},
	} {
		dep := d(tc.image, tc.labels)
		img := operatorImage(dep)
		assert.Equal(t, tc.found, img != "", tc.image)
		if tc.found {
			assert.Equal(t, tc.version, (&flinkOperator{d: dep, image: img}).version(), tc.image)
		}
	}
}

// TestCRDDrift: the CLI's own CRDs match themselves; each kind of
// difference is named.
func TestCRDDrift(t *testing.T) {
	crds, err := embeddedCRDs()
	require.NoError(t, err)
	require.Len(t, crds, 2)
	for _, want := range crds {
		assert.Empty(t, crdDrift(want, want.DeepCopy()), want.Name)
		for name, tc := range map[string]struct {
			edit func(*apiextensionsv1.CustomResourceDefinition)
			want string
		}{
			"field removed": {func(c *apiextensionsv1.CustomResourceDefinition) {
				delete(c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties, "status")
			}, "version v1alpha1: the schema differs"},
			"version missing": {func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Name = "v1beta1" },
				"version v1alpha1 is not installed"},
			"extra version": {func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta1"})
			}, "the cluster has version v1beta1"},
			"columns": {func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].AdditionalPrinterColumns = nil },
				"the printer columns differ"},
			"not served": {func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Served = false },
				"served or storage differ"},
		} {
			got := want.DeepCopy()
			tc.edit(got)
			assert.Contains(t, crdDrift(want, got), tc.want, "%s: %s", want.Name, name)
		}
	}
}

func TestReportChecks(t *testing.T) {
	var out bytes.Buffer
	err := reportChecks(&out, []checkLine{passed("a"), unsure("ask", "b: unknown"), failing("do this", "c")})
	assert.Equal(t, "✔ a\n? b: unknown\n    → ask\n✗ c\n    → do this\n", out.String())
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.code)

	out.Reset()
	require.NoError(t, reportChecks(&out, []checkLine{passed("a"), unsure("", "b")}), "unknown is not a failure")
}

func TestControllerVersionAgainstTheCLI(t *testing.T) {
	assert.False(t, versionsDiffer("v0.1.0", "v0.1.0"))
	assert.True(t, versionsDiffer("v0.2.0", "v0.1.0"))
	assert.True(t, versionsDiffer("v0.1.0", "0.1.1"))
	assert.False(t, versionsDiffer("dev", "v0.1.0"), "a development build compares with nothing")
	assert.False(t, versionsDiffer("v0.1.0", "latest"))
	assert.False(t, versionsDiffer("v0.1.0", "unknown"))

	d := &appsv1.Deployment{}
	d.Namespace, d.Name = "bg-gitops-system", "bg-gitops-controller"
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "controller", Image: "registry.example/bg-gitops:v9.9.9"}}
	d.Status.AvailableReplicas, d.Status.ReadyReplicas = 1, 1
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v0.1.0"
	line := controllerLine(d)
	assert.Equal(t, checkUnknown, line.state)
	assert.Contains(t, line.text, "the CLI is v0.1.0, the controller v9.9.9")
	Version = "v9.9.9"
	assert.Equal(t, checkOK, controllerLine(d).state)
}

// TestCheckUnreachableClusterIsExitCode2: a cluster that does not answer
// is exit code 2 with the reason, not a list of "?" and exit 0.
func TestCheckUnreachableClusterIsExitCode2(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	res := runCLI(t, "check", "--kubeconfig", kubeconfig)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "cannot reach the cluster at https://127.0.0.1:1")
	assert.Empty(t, res.stdout)
}

// The controller's arguments as a Deployment may write them: --flag=value,
// --flag value, and a bare boolean.
func TestControllerDeploymentFlags(t *testing.T) {
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "controller", Command: []string{"/bg-gitops", "controller"},
		Args: []string{"--leader-elect", "--receiver-external-url", "https://hooks.example", "--default-service-account=applier"}}}
	c := newControllerDeployment(d)
	for flag, want := range map[string]string{"leader-elect": "true", "receiver-external-url": "https://hooks.example", "default-service-account": "applier"} {
		got, ok := c.flag(flag)
		assert.True(t, ok, flag)
		assert.Equal(t, want, got, flag)
	}
}

// Two replicas without leader election would both act.
func TestReplicasWithoutLeaderElectionFail(t *testing.T) {
	d := &appsv1.Deployment{}
	d.Namespace, d.Name = "bg-gitops-system", "bg-gitops-controller"
	two := int32(2)
	d.Spec.Replicas = &two
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "controller", Args: []string{"--metrics-secure"}}}
	k := &checker{controllers: []*controllerDeployment{newControllerDeployment(d)}}
	lines := k.leader(context.Background())
	require.Len(t, lines, 1)
	assert.Equal(t, checkFailed, lines[0].state)
	assert.Contains(t, lines[0].text, "2 replicas without --leader-elect")
}

// A controller whose receiver listens on the loopback (bg-gitops dev) has
// no Service to route to it: the check asks the address itself, and fails
// when nothing answers there.
func TestLoopbackReceiverIsAskedDirectly(t *testing.T) {
	listening := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed) // the receiver's answer to a GET
	}))
	defer listening.Close()
	for _, tc := range []struct {
		addr string
		want checkState
	}{
		{strings.TrimPrefix(listening.URL, "http://"), checkOK},
		{freeAddress(t), checkFailed},
	} {
		d := &appsv1.Deployment{}
		d.Namespace, d.Name = "bg-gitops-system", "bg-gitops-controller"
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "controller", Args: []string{"--receiver-bind-address=" + tc.addr}}}
		k := &checker{controllers: []*controllerDeployment{newControllerDeployment(d)}, http: &http.Client{Timeout: 5 * time.Second}}
		lines := k.receiver(context.Background())
		require.Len(t, lines, 1)
		assert.Equal(t, tc.want, lines[0].state, "%s: %s", tc.addr, lines[0].text)
		assert.Contains(t, lines[0].text, "listens on "+tc.addr+" only")
	}
}

// TestSplitReceiverIsRecognised: a controller that serves no webhook
// (--receiver-bind-address=0) beside a Deployment that runs
// `controller --receiver-only` (config/receiver, the chart's
// receiver.separate) has its receiver there, behind the Service; without
// that Deployment there are no push webhooks.
func TestSplitReceiverIsRecognised(t *testing.T) {
	const ns = "bg-gitops-system"
	ctl := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bg-gitops-controller"}}
	ctl.Spec.Template.Spec.Containers = []corev1.Container{{Name: "controller", Args: []string{"controller", "--receiver-bind-address=0"}}}
	recv := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bg-gitops-receiver"}}
	recv.Spec.Template.Spec.Containers = []corev1.Container{{Name: "receiver", Args: []string{"controller", "--receiver-only", "--receiver-bind-address=:9292"}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: receiverService}}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: receiverService + "-1",
		Labels: map[string]string{discoveryv1.LabelServiceName: receiverService}}, AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}}

	for _, tc := range []struct {
		name string
		objs []client.Object
		want string
	}{
		{"split", []client.Object{ctl.DeepCopy(), recv, svc, slice}, "has 1 ready endpoint(s)"},
		{"off", []client.Object{ctl.DeepCopy()}, "off (--receiver-bind-address=0): no push webhooks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.objs...).Build()
			k := &checker{c: c, controllers: []*controllerDeployment{newControllerDeployment(ctl)}}
			lines := k.receiver(context.Background())
			require.Len(t, lines, 1)
			assert.Equal(t, checkOK, lines[0].state, lines[0].text)
			assert.Contains(t, lines[0].text, tc.want)
			if tc.name == "split" {
				assert.Contains(t, lines[0].text, "served by Deployment "+ns+"/bg-gitops-receiver, --receiver-only")
			}
		})
	}
}
