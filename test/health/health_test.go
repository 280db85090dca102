/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package health

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// Each phase that the test looks at is made to last by a simulated fault
// (a slow savepoint of the old colour, a slow start of the new one, a new
// colour that never becomes ready), so that polling cannot miss it.
const fbgdManifest = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: job
  annotations: {bggitops.dev/revision: "main@sha1:%040d"}
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "10 min"
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: "200ms"
    bggitops.dev/savepoint-timeout: "10 min"
  template:
    spec:
      image: %s
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp", "` + flinksim.FaultSavepointDelay + `": "2s"%s}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

// fbgdSpec is the object of commit rev; conf adds flinkConfiguration
// entries (simulated faults of the job).
func fbgdSpec(t *testing.T, ns string, rev int, image string, conf map[string]string, mutate ...func(*v1alpha1.FlinkBlueGreenDeployment)) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	extra := ""
	for k, v := range conf {
		extra += fmt.Sprintf(", %q: %q", k, v)
	}
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(fmt.Sprintf(fbgdManifest, rev, image, extra)), p))
	p.Namespace = ns
	for _, m := range mutate {
		m(p)
	}
	return p
}

// createLive creates obj and returns the object as the API server answered
// (no status yet: the controller has not written one).
func createLive(t *testing.T, obj client.Object, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "status")
	require.NoError(t, env.Client.Create(context.Background(), u))
	return u
}

// updateLive applies change to the live object and returns the object the
// API server answered the update with: a new generation, and the status of
// the previous one.
func updateLive(t *testing.T, ns, name string, obj client.Object, change func()) *unstructured.Unstructured {
	t.Helper()
	var gvk schema.GroupVersionKind
	switch obj.(type) {
	case *v1alpha1.FlinkBlueGreenDeployment:
		gvk = fbgdGVK
	default:
		gvk = gitGVK
	}
	require.Eventually(t, func() bool {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return false
		}
		change()
		return env.Client.Update(context.Background(), obj) == nil
	}, 10*time.Second, 50*time.Millisecond)
	return asUnstructured(t, obj, gvk)
}

func annotate(t *testing.T, obj client.Object, key string) {
	t.Helper()
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = time.Now().Format(time.RFC3339Nano)
	obj.SetAnnotations(a)
	require.NoError(t, env.Client.Patch(context.Background(), obj, patch))
}

// expectUnwritten pins the verdicts on an object the controller has not
// written a status to yet: Argo CD waits, Flux's expressions cannot be
// evaluated (Flux keeps polling), and kstatus, finding no condition to go
// by, calls it Current.
func expectUnwritten(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	v := judge(t, u)
	require.Equal(t, "Progressing", v.Argo, "%s", v)
	require.Error(t, v.FluxErr, "%s", v)
	require.Equal(t, kstatus.CurrentStatus, v.Kstatus, "%s", v)
}

// TestArgoCDHealthFollowsTheRollout drives a FlinkBlueGreenDeployment
// through a blue/green transition, a manual promotion, a failed rollout
// and a suspension, and pins what Argo CD, Flux and kstatus say of the
// live object at each step.
func TestArgoCDHealthFollowsTheRollout(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	startController(t, ns)
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	state := func(bg v1alpha1.BlueGreenState, job v1alpha1.JobState) func(*unstructured.Unstructured) bool {
		return func(u *unstructured.Unstructured) bool {
			return observed(u) && str(u, "status", "blueGreenState") == string(bg) && str(u, "status", "jobStatus", "state") == string(job)
		}
	}
	wait := func(what string, done func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
		t.Helper()
		return until(t, fbgdGVK, ns, "job", what, done)
	}
	update := func(rev int, image string, conf map[string]string, mutate ...func(*v1alpha1.FlinkBlueGreenDeployment)) *unstructured.Unstructured {
		t.Helper()
		want := fbgdSpec(t, ns, rev, image, conf, mutate...)
		return updateLive(t, ns, "job", p, func() {
			p.Spec = want.Spec
			p.Annotations[v1alpha1.RevisionAnnotation] = want.Annotations[v1alpha1.RevisionAnnotation]
		})
	}

	expectUnwritten(t, createLive(t, fbgdSpec(t, ns, 1, "flink:1.20.0", nil), fbgdGVK))
	u := wait("ACTIVE_BLUE RUNNING", state(v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	expect(t, "first deployment running", u, "Healthy", kstatus.CurrentStatus, kstatus.CurrentStatus)

	// A new image: savepoint blue (slow), start green (slow), cut over.
	u = update(2, "flink:1.20.1", map[string]string{flinksim.StartDelay: "2s"})
	expect(t, "new spec not yet observed", u, "Progressing", kstatus.InProgressStatus, kstatus.InProgressStatus)
	u = wait("SAVEPOINTING_BLUE", func(u *unstructured.Unstructured) bool {
		return observed(u) && str(u, "status", "blueGreenState") == string(v1alpha1.SavepointingBlue)
	})
	expect(t, "savepointing blue", u, "Progressing", kstatus.InProgressStatus, kstatus.InProgressStatus)
	u = wait("TRANSITIONING_TO_GREEN, green not ready", func(u *unstructured.Unstructured) bool {
		ready := str(u, "status", "deploymentReadyTimestamp")
		return observed(u) && str(u, "status", "blueGreenState") == string(v1alpha1.TransitioningToGreen) && ready == ""
	})
	expect(t, "transitioning to green", u, "Progressing", kstatus.InProgressStatus, kstatus.InProgressStatus)
	u = wait("ACTIVE_GREEN RUNNING", state(v1alpha1.ActiveGreen, v1alpha1.JobRunning))
	expect(t, "green running", u, "Healthy", kstatus.CurrentStatus, kstatus.CurrentStatus)

	// A manual promotion: blue runs the new spec, the cut-over waits.
	manual := func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Promotion = &v1alpha1.Promotion{Mode: v1alpha1.PromotionManual}
	}
	update(3, "flink:1.20.2", nil, manual)
	u = wait("waiting for a promotion", func(u *unstructured.Unstructured) bool {
		status, reason := condition(u, v1alpha1.ReconcilingCondition)
		return observed(u) && status == "True" && reason == "WaitingForPromotion"
	})
	expect(t, "waiting for a promotion", u, "Suspended", kstatus.InProgressStatus, kstatus.InProgressStatus)
	annotate(t, p, v1alpha1.PromoteRequestedAtAnnotation)
	u = wait("ACTIVE_BLUE RUNNING after the promotion", state(v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	expect(t, "promoted", u, "Healthy", kstatus.CurrentStatus, kstatus.CurrentStatus)

	// A new colour that never becomes ready: the rollout aborts, blue
	// keeps running.
	update(4, "flink:broken", map[string]string{flinksim.FaultNeverReady: "true"}, manual, func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Configuration[v1alpha1.AbortGracePeriodKey] = "2s"
	})
	u = wait("the rollout aborted", state(v1alpha1.ActiveBlue, v1alpha1.JobFailing))
	v := expect(t, "failed rollout", u, "Degraded", kstatus.FailedStatus, kstatus.FailedStatus)
	require.Contains(t, v.ArgoMessage, "job-green", "Argo CD shows why the rollout failed")

	// The job suspended as the spec asks.
	update(5, "flink:1.20.2", nil, manual, func(p *v1alpha1.FlinkBlueGreenDeployment) {
		p.Spec.Template.Spec.Job.State = v1alpha1.JobStateSuspended
	})
	u = wait("SUSPENDED", state(v1alpha1.ActiveBlue, v1alpha1.JobSuspended))
	expect(t, "suspended as asked", u, "Suspended", kstatus.CurrentStatus, kstatus.InProgressStatus)
}

// TestAJobThatFailsWhileActiveIsDegraded: a running job that the
// Flink operator reports FAILED (no rollout under way) is Degraded and
// Failed, where kstatus only sees Ready=False.
func TestAJobThatFailsWhileActiveIsDegraded(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	startController(t, ns)
	require.NoError(t, env.Client.Create(context.Background(), fbgdSpec(t, ns, 1, "flink:1.20.0", map[string]string{flinksim.FaultFailAfter: "1s"})))
	u := until(t, fbgdGVK, ns, "job", "the active job FAILED", func(u *unstructured.Unstructured) bool {
		return observed(u) && str(u, "status", "activeJobState") == "FAILED"
	})
	expect(t, "active job failed", u, "Degraded", kstatus.FailedStatus, kstatus.InProgressStatus)
}

// TestGitRepositoryHealthFollowsItsCommits follows a GitRepository through an
// applied revision, a commit that does not build, a suspension, a fix and
// a spec that cannot work.
func TestGitRepositoryHealthFollowsItsCommits(t *testing.T) {
	ns := reconciletest.Namespace(t, env.Client)
	startController(t, ns)
	gittest.Isolate(t)
	root := t.TempDir()
	repo := gittest.NewRepo(t, root, "config")
	srv := gittest.ServeHTTP(t, root, gittest.HTTPOptions{})
	push := func(files map[string]string) string {
		prefixed := map[string]string{}
		for k, v := range files {
			prefixed["deploy/"+k] = v
		}
		sha := repo.Commit(prefixed, "change")
		repo.Push("main")
		return "main@sha1:" + sha
	}
	const kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\n"
	const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {key: %q}\n"
	applied := func(rev string) func(*unstructured.Unstructured) bool {
		return func(u *unstructured.Unstructured) bool {
			status, _ := condition(u, v1alpha1.ReadyCondition)
			return observed(u) && str(u, "status", "lastAppliedRevision") == rev && status == "True"
		}
	}
	wait := func(what string, done func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
		t.Helper()
		return until(t, gitGVK, ns, "config", what, done)
	}

	rev1 := push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml"), "settings.yaml": fmt.Sprintf(configMap, "v1")})
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: srv.URL + "/config.git", Path: "./deploy", TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	expectUnwritten(t, createLive(t, gr, gitGVK))
	u := wait("applied "+rev1, applied(rev1))
	expect(t, "applied", u, "Healthy", kstatus.CurrentStatus, kstatus.CurrentStatus)

	// A commit that does not build: nothing is applied. kstatus reads
	// Ready=False as in progress; the expressions fail fast.
	push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml, missing.yaml")})
	annotate(t, gr, v1alpha1.ReconcileRequestedAtAnnotation)
	u = wait("BuildFailed", func(u *unstructured.Unstructured) bool {
		status, _ := condition(u, v1alpha1.BuildFailedCondition)
		return observed(u) && status == "True"
	})
	v := expect(t, "build failed", u, "Degraded", kstatus.FailedStatus, kstatus.InProgressStatus)
	require.Contains(t, v.ArgoMessage, "missing.yaml", "Argo CD shows why")

	// Suspended as the spec asks.
	u = updateLive(t, ns, "config", gr, func() { gr.Spec.Suspend = true })
	expect(t, "suspension not yet observed", u, "Progressing", kstatus.InProgressStatus, kstatus.InProgressStatus)
	u = wait("suspended", func(u *unstructured.Unstructured) bool {
		s, _, _ := unstructured.NestedBool(u.Object, "status", "suspended")
		return observed(u) && s
	})
	expect(t, "suspended", u, "Suspended", kstatus.CurrentStatus, kstatus.InProgressStatus)

	// Resumed with a fix.
	rev3 := push(map[string]string{"kustomization.yaml": fmt.Sprintf(kustomization, "settings.yaml"), "settings.yaml": fmt.Sprintf(configMap, "v3")})
	updateLive(t, ns, "config", gr, func() { gr.Spec.Suspend = false })
	u = wait("applied "+rev3, applied(rev3))
	expect(t, "fixed", u, "Healthy", kstatus.CurrentStatus, kstatus.CurrentStatus)

	// A schedule that cannot be parsed: Stalled.
	updateLive(t, ns, "config", gr, func() { gr.Spec.Interval, gr.Spec.Schedule = nil, "every tuesday" })
	u = wait("Stalled", func(u *unstructured.Unstructured) bool {
		status, _ := condition(u, v1alpha1.StalledCondition)
		return observed(u) && status == "True"
	})
	expect(t, "stalled", u, "Degraded", kstatus.FailedStatus, kstatus.FailedStatus)
}
