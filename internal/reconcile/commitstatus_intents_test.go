/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/status"
)

// TestAPendingRolloutStatusIsRecordedBeforeItIsPosted: the record of a
// pending status on a revision no record shows pending is stored
// (unconfirmed) before the forge is asked; when that write fails nothing
// is posted; a revision already recorded pending needs no write first.
func TestAPendingRolloutStatusIsRecordedBeforeItIsPosted(t *testing.T) {
	forge, requests := forgeEcho(t, "")
	rev1, rev2 := "main@sha1:"+strings.Repeat("1", 40), "main@sha1:"+strings.Repeat("2", 40)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "repo"},
		Spec: v1alpha1.GitRepositorySpec{CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "github", Address: forge.URL,
			Repository: "org/repo", SecretRef: v1alpha1.LocalObjectReference{Name: "forge"}}}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "forge"}, Data: map[string][]byte{"token": []byte("t")}}
	c := &CommitStatusReporter{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(gr, token).Build(),
		AllowInsecureHTTP: true, Now: func() time.Time { return testNow }}
	savepointing := func() *v1alpha1.FlinkBlueGreenDeployment {
		return &v1alpha1.FlinkBlueGreenDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "job", Generation: 2, Annotations: map[string]string{
				v1alpha1.SourceAnnotation: "a/repo", v1alpha1.RevisionAnnotation: rev2}},
			Status: v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.SavepointingBlue, ActiveRevision: rev1,
				TargetRevision: rev2, ActiveDeployment: "job-blue", JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning},
				LiveRevisions: []string{rev1}},
		}
	}
	ctx := status.RolloutContext("a", "job")
	pendingRecord := func(p *v1alpha1.FlinkBlueGreenDeployment) *v1alpha1.CommitStatusRecord {
		for i, r := range p.Status.CommitStatuses {
			if r.Context == ctx && r.Revision == rev2 && r.State == string(status.StatePending) {
				return &p.Status.CommitStatuses[i]
			}
		}
		return nil
	}

	t.Run("stored first", func(t *testing.T) {
		requests.Store(0)
		p := savepointing()
		var saved *v1alpha1.CommitStatusRecord
		var asked int32 = -1
		c.ReportRollout(context.Background(), p, func(context.Context) error {
			saved, asked = pendingRecord(p.DeepCopy()), requests.Load()
			return nil
		})
		require.NotNil(t, saved, "the pending status of rev2 was recorded before the post")
		assert.True(t, saved.Unconfirmed)
		assert.Equal(t, int32(1), saved.Pending, "the post it announces counts once")
		assert.Zero(t, asked, "the forge was asked nothing before the record was stored")
		assert.NotZero(t, requests.Load(), "then the forge was asked")
	})
	t.Run("the write fails", func(t *testing.T) {
		requests.Store(0)
		p := savepointing()
		c.ReportRollout(context.Background(), p, func(context.Context) error { return errors.New("conflict") })
		assert.Zero(t, requests.Load(), "nothing posted without its record")
		assert.Nil(t, findCondition(p.Status.Conditions, v1alpha1.CommitStatusFailedCondition), "not the forge's failure")
	})
	t.Run("already recorded pending", func(t *testing.T) {
		p := savepointing()
		p.Status.CommitStatuses = []v1alpha1.CommitStatusRecord{{Context: ctx, Revision: rev2, State: string(status.StatePending),
			Description: "an earlier phase", Pending: 1}}
		c.ReportRollout(context.Background(), p, func(context.Context) error {
			t.Error("a revision already recorded pending needs no write before the post")
			return nil
		})
	})
}
