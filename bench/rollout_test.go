//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// Simulator delays: the part of a rollout the Flink operator would take.
const (
	simStart     = time.Second
	simSavepoint = time.Second
)

const rolloutJob = `apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: job
spec:
  template:
    spec:
      image: %s
      flinkVersion: v1_20
      flinkConfiguration: {state.savepoints.dir: "file:///flink-sp"}
      jobManager: {resource: {memory: 1024m, cpu: 1}}
      taskManager: {resource: {memory: 1024m, cpu: 1}}
      job: {jarURI: "local:///opt/flink/job.jar", upgradeMode: savepoint, parallelism: 2}
`

// rolloutPhase is §1's push → sync success through a real Gitea and §2's
// push → rollout success of a stateful (savepoint) blue/green transition.
func (w *world) rolloutPhase(t *testing.T) {
	ctx := context.Background()
	const section1, section2 = "§1 latency", "§2 rollout"
	forge, err := gitea.Start(ctx, gitea.Options{})
	if err != nil {
		for _, f := range []string{"push → sync success (real Gitea)", "push → rollout success (stateful transition)"} {
			w.rep.add(figure{ID: f, Section: section2, Name: f, NotMeasured: "Gitea did not start: " + err.Error()})
		}
		t.Skip(err)
	}
	t.Cleanup(func() { _ = forge.Stop() })

	// The Flink operator simulator runs in this process, on its own user.
	mgr, err := ctrl.NewManager(w.cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := flinksim.New(flinksim.Options{StartDelay: simStart, SavepointDelay: simSavepoint}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	simCtx, stopSim := context.WithCancel(ctx)
	simDone := make(chan struct{})
	go func() { defer close(simDone); _ = mgr.Start(simCtx) }()
	t.Cleanup(func() { stopSim(); <-simDone })

	p := w.startController(t, "rollout", controllerArgs{leaderElect: true, leaseNS: leaseNS})
	w.waitLeader(t, leaseNS)

	const ns, repo = "rollout", "flink-job"
	w.namespace(t, ns)
	if err := w.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gitea-token", Namespace: ns},
		StringData: map[string]string{"token": forge.Token}}); err != nil {
		t.Fatal(err)
	}
	if err := w.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gitea-auth", Namespace: ns},
		StringData: map[string]string{"username": forge.AdminUser, "password": forge.AdminPassword}}); err != nil {
		t.Fatal(err)
	}
	if _, err := forge.CreateRepo(ctx, repo); err != nil {
		t.Fatal(err)
	}
	files := workloadFiles(0, "v0")
	files["deploy/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml, b.yaml, c.yaml, job.yaml]\n"
	files["deploy/job.yaml"] = fmt.Sprintf(rolloutJob, "flink:1.20.0")
	sha, err := forge.Commit(ctx, repo, files, "initial")
	if err != nil {
		t.Fatal(err)
	}
	gr := gitRepository(ns, 0, forge.CloneURL(repo), nil)
	gr.Name = repo
	gr.Spec.SecretRef = &v1alpha1.LocalObjectReference{Name: "gitea-auth"}
	gr.Spec.CommitStatus = &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
		Repository: forge.Repository(repo), SecretRef: v1alpha1.LocalObjectReference{Name: "gitea-token"}}
	if err := w.c.Create(ctx, gr); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tr.waitFor(ctx, 2*time.Minute, "first rollout", func(tr *tracker) bool {
		g, f := tr.gr(ns, repo), tr.fbgds[ns+"/job"]
		return ready(g) && g.Status.LastAppliedRevision == "main@sha1:"+sha && g.Status.WebhookPath != "" &&
			f != nil && f.Status.BlueGreenState == v1alpha1.ActiveBlue && f.Status.JobStatus.State == v1alpha1.JobRunning
	}); err != nil {
		t.Fatal(err)
	}
	w.tr.mu.Lock()
	hookPath := w.tr.gr(ns, repo).Status.WebhookPath
	w.tr.mu.Unlock()
	if err := forge.CreatePushWebhook(ctx, repo, "http://"+p.receiver+hookPath, webhookToken); err != nil {
		t.Fatal(err)
	}

	var pushTime, delivery, applied, sync, rollout, own []float64
	for r := 1; r <= w.s.rounds; r++ {
		w.tr.mu.Lock()
		prevAnn := w.tr.gr(ns, repo).Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
		w.tr.mu.Unlock()
		tPush := time.Now() // forge.Commit commits locally (milliseconds), then runs git push
		sha, err := forge.Commit(ctx, repo, map[string]string{"deploy/job.yaml": fmt.Sprintf(rolloutJob, fmt.Sprintf("flink:1.20.%d", r))}, fmt.Sprintf("image 1.20.%d", r))
		if err != nil {
			t.Fatal(err)
		}
		pushed := time.Now()
		rev := "main@sha1:" + sha
		tAnn, err := w.tr.waitFor(ctx, time.Minute, "webhook delivered", func(tr *tracker) bool {
			a := tr.gr(ns, repo).Annotations[v1alpha1.ReconcileRequestedAtAnnotation]
			return a != "" && a != prevAnn
		})
		if err != nil {
			t.Fatal(err)
		}
		tApplied, err := w.tr.waitFor(ctx, time.Minute, "applied", appliedRev(ns, repo, rev))
		if err != nil {
			t.Fatal(err)
		}
		tSync, tRollout, err := w.waitStatuses(ctx, forge, repo, sha, ns)
		if err != nil {
			t.Fatal(err)
		}
		delivery = append(delivery, tAnn.Sub(tPush).Seconds())
		pushTime = append(pushTime, pushed.Sub(tPush).Seconds())
		applied = append(applied, tApplied.Sub(tAnn).Seconds())
		sync = append(sync, tSync.Sub(tPush).Seconds())
		rollout = append(rollout, tRollout.Sub(tPush).Seconds())
		own = append(own, (tRollout.Sub(tAnn) - simStart - simSavepoint).Seconds())
		t.Logf("rollout round %d: delivery %.2fs, sync %.2fs, rollout %.2fs", r, tAnn.Sub(tPush).Seconds(), tSync.Sub(tPush).Seconds(), tRollout.Sub(tPush).Seconds())
	}
	w.rep.add(figure{ID: "gitea-push", Section: section1, Name: "git commit + push to Gitea (until git push returns)", Unit: "s", Samples: pushTime,
		Note: "the \"push →\" figures start when the push starts"})
	w.rep.add(figure{ID: "gitea-delivery", Section: section1, Name: "Gitea push → webhook delivered (annotation set by the receiver)", Unit: "s", Samples: delivery,
		Note: "Gitea's push handling and webhook queue, not the controller"})
	w.rep.add(figure{ID: "gitea-sync", Section: section1, Name: "push → `sync` success commit status, through a real Gitea", Unit: "s", Samples: sync,
		Note: "includes Gitea's webhook delivery; status polled from Gitea's API every 50 ms"})
	w.rep.add(figure{ID: "gitea-applied", Section: section1, Name: "webhook delivered → applied (Gitea repository, 3 ConfigMaps + 1 FlinkBlueGreenDeployment)", Unit: "s", Samples: applied})
	w.rep.add(figure{ID: "rollout-total", Section: section2, Name: "push → `rollout` success, stateful (savepoint) blue/green transition", Unit: "s", Samples: rollout,
		Note: fmt.Sprintf("simulator: savepoint %s, job start %s, teardown 200 ms", simSavepoint, simStart)})
	w.rep.add(figure{ID: "rollout-own", Section: section2, Name: "controller's own share of the rollout (webhook delivered → rollout success, minus the simulator's savepoint and start delays)", Unit: "s", Samples: own,
		Note: "includes API server, simulator reconcile hops and Gitea API calls; excludes Gitea's webhook queue"})
	p.stop(syscall.SIGTERM)
}

// waitStatuses polls Gitea until the sync and rollout statuses of sha are
// success; it returns when each was first seen.
func (w *world) waitStatuses(ctx context.Context, forge *gitea.Server, repo, sha, ns string) (tSync, tRollout time.Time, err error) {
	syncCtx, rolloutCtx := status.SyncContext(ns, repo), status.RolloutContext(ns, "job")
	deadline := time.Now().Add(2 * time.Minute)
	latest := map[string]string{}
	var all []gitea.Status
	for time.Now().Before(deadline) {
		sts, err := forge.CommitStatuses(ctx, repo, sha)
		if err != nil {
			return tSync, tRollout, err
		}
		now := time.Now()
		all = sts
		latest = map[string]string{}
		newest := map[string]int64{} // Gitea's order is not by time: the highest id is the latest
		for _, s := range sts {
			if s.ID > newest[s.Context] {
				newest[s.Context], latest[s.Context] = s.ID, s.State
			}
		}
		if tSync.IsZero() && latest[syncCtx] == "success" {
			tSync = now
		}
		if tRollout.IsZero() && latest[rolloutCtx] == "success" {
			tRollout = now
		}
		if strings.Contains(latest[rolloutCtx], "fail") || strings.Contains(latest[rolloutCtx], "error") {
			return tSync, tRollout, fmt.Errorf("rollout status %s", latest[rolloutCtx])
		}
		if !tSync.IsZero() && !tRollout.IsZero() {
			return tSync, tRollout, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.tr.mu.Lock()
	defer w.tr.mu.Unlock()
	f := w.tr.fbgds[ns+"/job"]
	return tSync, tRollout, fmt.Errorf("statuses of %s not success within 2m: %v; all: %+v; FlinkBlueGreenDeployment status %+v; GitRepository status %+v", sha, latest, all, f.Status, w.tr.gr(ns, repo).Status)
}
