/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// orphanedBlue runs job until ACTIVE_BLUE, deletes it with
// propagationPolicy Orphan (kubectl delete --cascade=orphan) and waits
// until it is gone and the garbage collector has left job-blue owned by
// nothing. It returns job-blue as it was left.
func orphanedBlue(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")))
	eventually(t, ns, "ACTIVE_BLUE", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	require.NoError(t, env.Client.Delete(ctx, getFBGD(t, ns, "job"), client.PropagationPolicy("Orphan")))
	eventually(t, ns, "job gone, job-blue orphaned", func() bool {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, &v1alpha1.FlinkBlueGreenDeployment{})
		blue, ok := child(ns, "job-blue")
		require.True(t, ok, "job-blue was deleted")
		return apierrors.IsNotFound(err) && len(blue.GetOwnerReferences()) == 0
	})
	blue, _ := child(ns, "job-blue")
	assert.Equal(t, "RUNNING", nested(blue, "status", "jobStatus", "state"), "the orphaning deletion stopped job-blue")
	return blue
}

// A FlinkBlueGreenDeployment deleted with --cascade=orphan leaves its
// child running; created again, it adopts the child as it runs (the same
// object, the same job) and owns it. (Failed on the code as it was: the
// deletion deleted the child, and a child owned by nothing stalled the
// new object.)
func TestAnOrphanedChildOfTheSameJobIsAdopted(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blue := orphanedBlue(t, ns)

	require.NoError(t, env.Client.Create(context.Background(), fbgdObject(t, ns, "job", 1, "flink:1.20.0", "")))
	eventually(t, ns, "ACTIVE_BLUE again", state(t, ns, "job", v1alpha1.ActiveBlue, v1alpha1.JobRunning))
	p := getFBGD(t, ns, "job")
	eventually(t, ns, "job-blue owned by the new object", func() bool {
		b, _ := child(ns, "job-blue")
		refs := b.GetOwnerReferences()
		return len(refs) == 1 && refs[0].UID == p.UID
	})
	now, _ := child(ns, "job-blue")
	assert.Equal(t, blue.GetUID(), now.GetUID(), "job-blue was created again")
	assert.Equal(t, nested(blue, "status", "jobStatus", "jobId"), nested(now, "status", "jobStatus", "jobId"), "job-blue's job was restarted")
	_, green := child(ns, "job-green")
	assert.False(t, green, "a job was started beside the adopted one")
	eventuallyWarned(t, ns, "job", "OrphanAdopted")
}

// Created again over the orphaned child with another job (another
// jarURI), the object refuses it: Stalled names the child and why, and
// the child is never deleted, re-specced or relabelled, nor a job started
// beside it.
func TestAnOrphanedChildOfAnotherJobIsRefused(t *testing.T) {
	ns := newNamespace(t)
	startController(t, ns)
	blue := orphanedBlue(t, ns)

	p := fbgdObject(t, ns, "job", 2, "flink:1.20.0", "")
	p.Spec.Template.Spec.Job.JarURI = "local:///opt/flink/other.jar"
	p.Labels = map[string]string{"team": "payments"}
	require.NoError(t, env.Client.Create(context.Background(), p))
	want := "FlinkDeployment job-blue exists, owned by nothing, and is not the job of job: it runs jarURI local:///opt/flink/job.jar, not local:///opt/flink/other.jar"
	eventually(t, ns, "Stalled naming job-blue", func() bool {
		c := apimeta.FindStatusCondition(getFBGD(t, ns, "job").Status.Conditions, v1alpha1.StalledCondition)
		return c != nil && c.Status == "True" && strings.Contains(c.Message, want)
	})
	eventuallyWarned(t, ns, "job", "AdoptionRefused")
	now, ok := child(ns, "job-blue")
	require.True(t, ok, "job-blue was deleted")
	assert.Equal(t, blue.GetUID(), now.GetUID())
	assert.Equal(t, blue.GetGeneration(), now.GetGeneration(), "job-blue was re-specced")
	assert.Empty(t, now.GetOwnerReferences(), "job-blue was adopted")
	assert.Equal(t, blue.GetLabels(), now.GetLabels(), "job-blue was relabelled")
	assert.Equal(t, "RUNNING", nested(now, "status", "jobStatus", "state"))
	_, green := child(ns, "job-green")
	assert.False(t, green, "a job was started beside the refused one")
}
