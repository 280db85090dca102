//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bench

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

const scaleOutSection = "§5 scale-out"

// shardPhase: two controller processes, --watch-label-selector shard=a and
// shard=b, split 500 GitRepositories. Each shard elects its own leader
// (its own Lease namespace), as two sharded Deployments would.
func (w *world) shardPhase(t *testing.T) {
	n := w.s.shardN
	w.ensureRepos(t, n)
	a := w.startController(t, "shard-a", controllerArgs{leaderElect: true, leaseNS: "bench-shard-a", selector: "shard=a"})
	b := w.startController(t, "shard-b", controllerArgs{leaderElect: true, leaseNS: "bench-shard-b", selector: "shard=b"})
	w.waitLeader(t, "bench-shard-a")
	w.waitLeader(t, "bench-shard-b")
	shard := func(i int) map[string]string {
		if i%2 == 0 {
			return map[string]string{"shard": "a"}
		}
		return map[string]string{"shard": "b"}
	}
	var create []float64
	var lastNS string
	for r := 1; r <= w.s.shardRounds; r++ {
		ns := fmt.Sprintf("shards-r%d", r)
		d := w.createAll(t, ns, n, shard)
		t.Logf("shards round %d: %d Ready in %s", r, n, d.Round(time.Millisecond))
		create = append(create, d.Seconds())
		if r < w.s.shardRounds {
			w.deleteAll(t, ns)
		}
		lastNS = ns
	}
	f := figure{ID: fmt.Sprintf("shards-create-n%d", n), Section: scaleOutSection, Name: fmt.Sprintf("creation → all Ready, N=%d split over two shards (%d each)", n, n/2), Unit: "s", Samples: create}
	if n == 500 {
		f.Target, f.TargetMax = "≤ 10 s", target(10)
	}
	w.rep.add(f)
	ra := a.metric("controller_runtime_reconcile_total", `controller="gitrepository"`)
	rb := b.metric("controller_runtime_reconcile_total", `controller="gitrepository"`)
	w.rep.Extra["shard split"] = fmt.Sprintf("GitRepository reconciles over all rounds: shard a %.0f, shard b %.0f (each shard sees only its %d objects per round)", ra, rb, n/2)
	for _, s := range []struct {
		name string
		p    *controllerProc
	}{{"a", a}, {"b", b}} {
		w.rep.add(figure{ID: "shards-rss-" + s.name, Section: scaleOutSection, Name: fmt.Sprintf("peak RSS (VmHWM) of shard %s (%d GitRepositories per round)", s.name, n/2), Unit: "MiB",
			Samples: []float64{float64(s.p.peakRSS()) / (1 << 20)}, Note: "one process, one value"})
	}
	a.stop(syscall.SIGTERM)
	b.stop(syscall.SIGTERM)
	w.deleteAll(t, lastNS)
}

// standbySettle is how long a new standby runs before the leader is
// stopped, after its first attempt at the Lease.
const standbySettle = 5 * time.Second

// takeoverPhase: two replicas with leader election manage 50
// GitRepositories. The leader is stopped (SIGKILL, then SIGTERM); the
// figures are the time until the standby holds the Lease, and until it
// has handled a reconcile request made right after the stop.
func (w *world) takeoverPhase(t *testing.T) {
	const n = 50
	const ns = "takeover"
	lease := "bench-takeover"
	ctx := context.Background()
	w.ensureRepos(t, n)
	args := controllerArgs{leaderElect: true, leaseNS: lease}
	leader := w.startController(t, "takeover-0", args)
	leaderID := w.waitLeader(t, lease)
	standby := w.startController(t, "takeover-1", args)
	w.createAll(t, ns, n, nil)
	results := map[syscall.Signal][2][]float64{}
	procs := 2
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		for r := 0; r < w.s.rounds; r++ {
			name := repoName(r % n)
			// A standby that has been up a while, as in a Deployment:
			// it has tried the Lease and waits for its next attempt
			// (retry period 2 s, jittered up to 4.4 s). Stopping the
			// leader before that first attempt would time the standby's
			// start instead.
			standby.waitLog(t, "to acquire leader lease", time.Minute)
			time.Sleep(standbySettle)
			t0 := time.Now()
			leader.signal(sig)
			mark := t0.Format(time.RFC3339Nano)
			w.requestReconcile(t, ns, name, mark)
			newID := w.waitLeader(t, lease, leaderID)
			tLease := time.Now()
			tWork, err := w.tr.waitFor(ctx, time.Minute, "reconcile after takeover", func(tr *tracker) bool {
				gr := tr.gr(ns, name)
				return gr != nil && gr.Status.LastHandledReconcileAt == mark
			})
			if err != nil {
				t.Fatal(err)
			}
			rs := results[sig]
			rs[0] = append(rs[0], tLease.Sub(t0).Seconds())
			rs[1] = append(rs[1], tWork.Sub(t0).Seconds())
			results[sig] = rs
			t.Logf("takeover after %s: lease %.2fs, reconcile %.2fs", sig, tLease.Sub(t0).Seconds(), tWork.Sub(t0).Seconds())
			leader.wait()
			leader, leaderID = standby, newID
			standby = w.startController(t, fmt.Sprintf("takeover-%d", procs), args)
			procs++
		}
	}
	kill, term := results[syscall.SIGKILL], results[syscall.SIGTERM]
	w.rep.add(figure{ID: "takeover-kill-lease", Section: scaleOutSection, Name: "leader takeover after SIGKILL (standby holds the Lease)", Unit: "s", Samples: kill[0],
		Target: "≤ 20 s", TargetMax: target(20), Note: "controller-runtime defaults: lease 15 s, renew deadline 10 s, retry 2 s"})
	w.rep.add(figure{ID: "takeover-kill-work", Section: scaleOutSection, Name: "SIGKILL → new leader handled a reconcile request made at the kill", Unit: "s", Samples: kill[1]})
	w.rep.add(figure{ID: "takeover-term-lease", Section: scaleOutSection, Name: "leader takeover after a graceful stop (SIGTERM; the Lease is released)", Unit: "s", Samples: term[0],
		Target: "≤ 2 s", TargetMax: target(2), Note: fmt.Sprintf("the standby had run %s since its first attempt at the Lease; it tries again after the retry period (2 s) with client-go's jitter (up to 4.4 s)", standbySettle)})
	w.rep.add(figure{ID: "takeover-term-work", Section: scaleOutSection, Name: "SIGTERM → new leader handled a reconcile request made at the stop", Unit: "s", Samples: term[1]})
	leader.stop(syscall.SIGTERM)
	standby.stop(syscall.SIGTERM)
	w.deleteAll(t, ns)
}
