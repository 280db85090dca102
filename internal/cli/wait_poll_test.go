/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of the poll loop every wait runs.

package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// TestWaitSurvivesATransientReadError: a wait in CI lasts as long as the
// rollout's timers (50 minutes with the README's production timers), and a
// failed read in between (the API server restarting, a load balancer's
// 503, a dropped connection) says nothing about the rollout. Transient
// read errors are retried until the deadline; errors that will not go
// away (forbidden, unauthorized) end the wait at once (exit 2).
func TestWaitSurvivesATransientReadError(t *testing.T) {
	p := stampedFBGD(rev(shaB), v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveGreen,
		JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}, ActiveDeployment: "job-green",
		ActiveRevision: rev(shaB), TargetRevision: rev(shaB)})
	fails := 2
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if fails > 0 {
				fails--
				return apierrors.NewServiceUnavailable("the server is restarting")
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	var out bytes.Buffer
	w := &revisionWait{client: c, want: commitRef(shaB), progress: newProgress(&out),
		budget: newBudget(time.Now(), 10*time.Second, false)}
	err := w.fbgds(context.Background(), []types.NamespacedName{{Namespace: "ns", Name: "job"}})
	require.NoError(t, err, out.String())
	assert.Contains(t, lastLine(out.String()), "is live on job-green")

	forbidden := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewForbidden(v1alpha1.GroupVersion.WithResource("flinkbluegreendeployments").GroupResource(), "job", nil)
		}}).Build()
	w = &revisionWait{client: forbidden, want: commitRef(shaB), progress: newProgress(&out),
		budget: newBudget(time.Now(), 10*time.Second, false)}
	start := time.Now()
	err = w.fbgds(context.Background(), []types.NamespacedName{{Namespace: "ns", Name: "job"}})
	require.Error(t, err)
	assert.Equal(t, -1, exitCode(err), "a plain error: exit 2")
	assert.Less(t, time.Since(start), 2*time.Second)
}
