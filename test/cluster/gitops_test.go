/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitops_test.go: a tenant onboarded with config/tenant, its GitRepository
// fetched by the controller's pod from a git server over the pod network,
// a blue/green rollout, a push webhook through the receiver Service, and
// the Lease handed over between two replicas.

package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/manager"
)

// tenant is the namespace onboarded with config/tenant.
const tenant = "flink"

// orders is the repository's FlinkBlueGreenDeployment (its image is
// replaced by the next commit); savepoints and a fast reschedule, as the
// other tests' jobs.
const orders = `apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: orders
spec:
  configuration:
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "200ms"
  template:
    spec:
      image: flink:1.20.0
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

// tenantRepositoryIsApplied: a namespace onboarded as README.md's
// Install section says (config/tenant with its namespace set by a
// kustomize overlay), whose GitRepository points at a git server of this
// process (127.0.0.1, reached by the pods at cluster.HostIP through one
// DNAT rule, as they reach the API server): the controller's pod fetches
// and builds it in its render workers and applies it as the tenant's
// bg-gitops-applier, the GitRepository becomes Ready at the commit, the
// ConfigMap is there, and the simulated Flink operator runs the
// FlinkBlueGreenDeployment's first deployment to ACTIVE_BLUE.
func tenantRepositoryIsApplied(ctx context.Context, t *testing.T, in *installation) {
	c := in.c
	run(ctx, t, in.kubectl, "create", "namespace", tenant, "--kubeconfig", c.Kubeconfig())
	overlay := filepath.Join(t.TempDir(), "tenant")
	writeFile(t, filepath.Join(overlay, "kustomization.yaml"),
		"resources:\n- "+relativeTo(t, overlay, "config", "tenant")+"\nnamespace: "+tenant+"\n")
	run(ctx, t, in.kubectl, "apply", "-k", overlay, "--kubeconfig", c.Kubeconfig())
	out := run(ctx, t, in.bin, "check", "-n", tenant, "--kubeconfig", c.Kubeconfig())
	t.Logf("bg-gitops check -n %s:\n%s", tenant, out)

	repo := in.repo
	addr, err := c.ReachFromPods(port(t, in.git.URL))
	if err != nil {
		t.Fatal(err)
	}
	head := repo.Commit(map[string]string{
		"kustomization.yaml": "namespace: " + tenant + "\nresources: [settings.yaml, orders.yaml]\n",
		"settings.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {greeting: hello}\n",
		"orders.yaml":        orders,
	}, "orders")
	repo.Push("main")

	run(ctx, t, in.bin, "create", "secret", "webhook", "hook", "-n", tenant, "--kubeconfig", c.Kubeconfig())
	// An hour between polls: later commits arrive by the push webhook.
	gr := fmt.Sprintf(`apiVersion: bggitops.dev/v1alpha1
kind: GitRepository
metadata: {name: jobs, namespace: %s}
spec:
  url: http://%s/jobs.git
  ref: {branch: main}
  path: ./
  interval: 1h
  webhook: {secretRef: {name: hook}}
`, tenant, addr)
	grFile := filepath.Join(t.TempDir(), "gitrepository.yaml")
	writeFile(t, grFile, gr)
	start := time.Now()
	run(ctx, t, in.kubectl, "apply", "-f", grFile, "--kubeconfig", c.Kubeconfig())

	waitApplied(ctx, t, in, head, 2*time.Minute)
	t.Logf("GitRepository Ready at %s %s after apply", head[:12], time.Since(start).Round(100*time.Millisecond))
	cm := &corev1.ConfigMap{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "settings"}, cm); err != nil || cm.Data["greeting"] != "hello" {
		t.Errorf("the repository's ConfigMap: %v %v", err, cm.Data)
	}
	waitFBGD(ctx, t, in, v1alpha1.ActiveBlue, "orders-blue", "flink:1.20.0")
	t.Logf("orders ACTIVE_BLUE %s after apply", time.Since(start).Round(100*time.Millisecond))
}

// webhookRollsOutTheNextCommit: a commit that changes the job's image,
// announced by a GitHub push webhook POSTed from this machine to the
// receiver Service's ClusterIP (kube-proxy's rules send it to the
// controller's pod), is applied at once (the GitRepository polls hourly),
// and the simulated operator and the controller roll it out: a green
// FlinkDeployment of the new image from blue's savepoint, then
// ACTIVE_GREEN.
func webhookRollsOutTheNextCommit(ctx context.Context, t *testing.T, in *installation) {
	c, repo := in.c, in.repo
	gr := &v1alpha1.GitRepository{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "jobs"}, gr); err != nil {
		t.Fatal(err)
	}
	if gr.Status.WebhookPath == "" {
		t.Fatalf("no status.webhookPath: %+v", gr.Status)
	}
	svc := &corev1.Service{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: namespace, Name: "bg-gitops-receiver"}, svc); err != nil {
		t.Fatal(err)
	}
	hook := "http://" + svc.Spec.ClusterIP + gr.Status.WebhookPath
	secret := &corev1.Secret{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "hook"}, secret); err != nil {
		t.Fatal(err)
	}

	head := repo.Commit(map[string]string{"orders.yaml": strings.Replace(orders, "image: flink:1.20.0", "image: flink:1.20.1", 1)}, "flink 1.20.1")
	repo.Push("main")
	start := time.Now()
	if code := signedPush(ctx, t, hook, secret.Data["token"], head); code != http.StatusOK {
		t.Fatalf("POST %s: %d, want 200\n%s", hook, code, controllerLogs(ctx, in))
	}
	waitApplied(ctx, t, in, head, time.Minute)
	t.Logf("%s applied %s after the webhook", head[:12], time.Since(start).Round(100*time.Millisecond))
	green := waitFBGD(ctx, t, in, v1alpha1.ActiveGreen, "orders-green", "flink:1.20.1")
	if sp, _, _ := unstructured.NestedString(green.Object, "spec", "job", "initialSavepointPath"); !strings.Contains(sp, "/flink-sp/savepoint-") {
		t.Errorf("orders-green does not start from a savepoint of orders-blue: initialSavepointPath %q", sp)
	}
	t.Logf("orders ACTIVE_GREEN %s after the webhook", time.Since(start).Round(100*time.Millisecond))
}

// port is the port of a server's URL.
func port(t *testing.T, serverURL string) int {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// signedPush POSTs a GitHub push of main at head to url, signed with
// token, and returns the status code.
func signedPush(ctx context.Context, t *testing.T, url string, token []byte, head string) int {
	t.Helper()
	body := []byte(`{"ref":"refs/heads/main","after":"` + head + `"}`)
	mac := hmac.New(sha256.New, token)
	mac.Write(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-GitHub-Delivery", "cluster-test-"+head[:12])
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// waitApplied waits until the tenant's GitRepository is Ready with head
// applied.
func waitApplied(ctx context.Context, t *testing.T, in *installation, head string, timeout time.Duration) {
	t.Helper()
	gr := &v1alpha1.GitRepository{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := in.c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "jobs"}, gr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return strings.HasSuffix(gr.Status.LastAppliedRevision, head) && apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition), nil
	})
	if err != nil {
		t.Fatalf("GitRepository not Ready at %s: %v\nstatus: %+v\n%s", head[:12], err, gr.Status, controllerLogs(ctx, in))
	}
}

// waitFBGD waits until orders is in state with its job RUNNING on the
// FlinkDeployment active, which runs image, and returns that
// FlinkDeployment.
func waitFBGD(ctx context.Context, t *testing.T, in *installation, state v1alpha1.BlueGreenState, active, image string) *unstructured.Unstructured {
	t.Helper()
	fbgd := &v1alpha1.FlinkBlueGreenDeployment{}
	fd := &unstructured.Unstructured{}
	fd.SetGroupVersionKind(schema.GroupVersionKind{Group: "flink.apache.org", Version: "v1beta1", Kind: "FlinkDeployment"})
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := in.c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "orders"}, fbgd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		st := fbgd.Status
		if st.BlueGreenState != state || st.JobStatus.State != v1alpha1.JobRunning || st.ActiveDeployment != active {
			return false, nil
		}
		if err := in.c.Client().Get(ctx, client.ObjectKey{Namespace: tenant, Name: active}, fd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		img, _, _ := unstructured.NestedString(fd.Object, "spec", "image")
		return img == image, nil
	})
	if err != nil {
		t.Fatalf("orders not %s on %s (%s): %v\nstatus: %+v\n%s", state, active, image, err, fbgd.Status, controllerLogs(ctx, in))
	}
	return fd
}

// leaderPodDeletedHandsOverTheLease: with replicas: 2 (an overlay of
// config/default, re-applied), both pods run and one holds the Lease;
// kubectl delete pod of the leader hands the Lease to the other replica
// (the leader releases it as it stops; the node is cordoned meanwhile, so
// the Deployment's replacement pod cannot be the one that takes it).
func leaderPodDeletedHandsOverTheLease(ctx context.Context, t *testing.T, in *installation) {
	c := in.c
	writeFile(t, filepath.Join(in.overlay, "kustomization.yaml"), in.kustomization+"replicas:\n- name: bg-gitops-controller\n  count: 2\n")
	run(ctx, t, in.kubectl, "apply", "-k", in.overlay, "--kubeconfig", c.Kubeconfig())
	pods := readyPods(ctx, t, c, 2)
	holder := leaseHolder(ctx, t, in)
	var leader, other string
	for _, p := range pods {
		if strings.HasPrefix(holder, p.Name+"_") {
			leader = p.Name
		} else {
			other = p.Name
		}
	}
	if leader == "" || other == "" {
		t.Fatalf("the Lease is held by %q, the pods are %s and %s", holder, pods[0].Name, pods[1].Name)
	}
	// The node cordoned, the Deployment's replacement pod stays Pending:
	// started within the waiting replica's retry period, it could
	// otherwise take the released Lease first.
	run(ctx, t, in.kubectl, "cordon", c.Node, "--kubeconfig", c.Kubeconfig())
	start := time.Now()
	run(ctx, t, in.kubectl, "delete", "pod", "-n", namespace, leader, "--kubeconfig", c.Kubeconfig())
	waitLeader(ctx, t, in, other)
	t.Logf("the Lease went from %s to %s %s after kubectl delete pod", leader, other, time.Since(start).Round(100*time.Millisecond))
	run(ctx, t, in.kubectl, "uncordon", c.Node, "--kubeconfig", c.Kubeconfig())
	readyPods(ctx, t, c, 2)
}

// leaseHolder is the leader Lease's holder identity (pod name, "_", a
// UUID), waiting for one.
func leaseHolder(ctx context.Context, t *testing.T, in *installation) string {
	t.Helper()
	var holder string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		if err := in.c.Client().Get(ctx, client.ObjectKey{Namespace: namespace, Name: manager.LeaderElectionID}, lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		return holder != "", nil
	})
	if err != nil {
		t.Fatalf("no Lease holder: %v", err)
	}
	return holder
}
