/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// requestCounter counts every request and every write of a client.
type requestCounter struct {
	next             http.RoundTripper
	requests, writes atomic.Int64
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.Contains(r.URL.RawQuery, "watch=true") {
		c.requests.Add(1)
		if r.Method != http.MethodGet && !strings.Contains(r.URL.RawQuery, "dryRun=All") {
			c.writes.Add(1)
		}
	}
	return c.next.RoundTrip(r)
}

func countingController(b *testing.B, ns string) *requestCounter {
	rc := &requestCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { rc.next = rt; return rc })
	startControllerWith(b, ns, cfg)
	return rc
}

// BenchmarkTransition: API requests and writes the controller sends for
// one complete stateful transition (savepoint, new colour, cut-over).
func BenchmarkTransition(b *testing.B) {
	t := b
	ns := newNamespace(t)
	rc := countingController(b, ns)
	deployBlue(t, ns, "job")
	b.ResetTimer()
	start := rc.requests.Load()
	startW := rc.writes.Load()
	for i := 0; i < b.N; i++ {
		want := v1alpha1.ActiveGreen
		if i%2 == 1 {
			want = v1alpha1.ActiveBlue
		}
		update(t, ns, "job", i+2, fmt.Sprintf("flink:1.20.%d", i+1), "")
		eventually(t, ns, string(want), state(t, ns, "job", want, v1alpha1.JobRunning))
	}
	b.ReportMetric(float64(rc.requests.Load()-start)/float64(b.N), "requests/transition")
	b.ReportMetric(float64(rc.writes.Load()-startW)/float64(b.N), "writes/transition")
}

// BenchmarkIdleDeployments: 200 settled FlinkBlueGreenDeployments; the
// controller's API requests, writes and CPU per idle minute (measured over
// a shorter window and scaled).
func BenchmarkIdleDeployments(b *testing.B) {
	rc := idleDeployments(b)
	window := 20 * time.Second
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, wr, cpu := rc.requests.Load(), rc.writes.Load(), cpuSeconds()
		time.Sleep(window)
		scale := float64(time.Minute) / float64(window)
		b.ReportMetric(float64(rc.requests.Load()-req)*scale, "requests/idle-min")
		b.ReportMetric(float64(rc.writes.Load()-wr)*scale, "writes/idle-min")
		b.ReportMetric((cpuSeconds()-cpu)*scale, "cpu-s/idle-min")
	}
}

// idle is the settled world of BenchmarkIdleDeployments, set up once per
// process: the testing package calls a benchmark more than once (b.N = 1
// first), and a second set of 200 deployments would measure 400.
var idle struct {
	once sync.Once
	rc   *requestCounter
	err  error
}

func idleDeployments(b *testing.B) *requestCounter {
	const n = 200
	idle.once.Do(func() {
		ns := reconciletest.Namespace(b, env.Client)
		idle.rc = &requestCounter{}
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { idle.rc.next = rt; return idle.rc })
		// Not bound to this call's b (its cleanups run before the next
		// call measures): it runs until the process ends. No
		// GitRepository here, so no git cache to clean up.
		if _, idle.err = reconciletest.Start(cfg, reconciletest.Options{Namespace: ns,
			Controllers: &reconcile.Options{Concurrent: 2}}); idle.err != nil {
			return
		}
		ctx := context.Background()
		for i := 0; i < n && idle.err == nil; i++ {
			idle.err = env.Client.Create(ctx, fbgdObject(b, ns, fmt.Sprintf("job-%03d", i), 1, "flink:1.20.0", ""))
		}
		// All of them, not one by one with eventually's deadline each: the
		// first created need not be the first ready, and on a loaded
		// machine 200 first deployments take minutes.
		if idle.err == nil {
			idle.err = allActive(ctx, ns, n, 10*time.Minute)
		}
		time.Sleep(5 * time.Second)
	})
	if idle.err != nil {
		b.Fatal(idle.err)
	}
	return idle.rc
}

// allActive waits until n FlinkBlueGreenDeployments of ns are ACTIVE_BLUE
// with their job RUNNING.
func allActive(ctx context.Context, ns string, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		list := &v1alpha1.FlinkBlueGreenDeploymentList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		active := 0
		for _, p := range list.Items {
			if p.Status.BlueGreenState == v1alpha1.ActiveBlue && p.Status.JobStatus.State == v1alpha1.JobRunning {
				active++
			}
		}
		if active == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d ACTIVE_BLUE after %s", active, n, within)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// cpuSeconds is this process's user+system CPU time (controller, simulator
// and test client; the simulator and client are idle too).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
