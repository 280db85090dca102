/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// apierrors.go: the api-errors fault (nemesis.apiErrors): a validating
// webhook nothing listens on fails every write of FlinkDeployments and
// FlinkStateSnapshots.

package chaos

import (
	"context"
	"errors"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// unreachableWebhook is an admission webhook nothing listens on: with
// failurePolicy Fail, the API server answers every write it covers with
// 500 "failed calling webhook", as when a cluster's policy webhook is down.
const unreachableWebhook = "https://127.0.0.1:1/validate"

// apiErrors makes every create, update and delete of FlinkDeployments and
// FlinkStateSnapshots fail with a transient error for hold (longer than
// the savepoint timeout and the abort grace period), then lifts it.
func (n *nemesis) apiErrors(ctx context.Context, hold time.Duration) error {
	w := failingWebhook()
	if err := n.e.c.Create(ctx, w); err != nil {
		return err
	}
	n.tl.logf(global, "every write of a Flink object fails (webhook %s down) for %s", w.Name, hold)
	sleep(ctx, hold)
	// Lifted even when the run is ending: the settle phase needs writes.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var err error
	for cleanup.Err() == nil {
		if err = client.IgnoreNotFound(n.e.c.Delete(cleanup, w)); err == nil {
			n.tl.logf(global, "writes of Flink objects accepted again")
			return nil
		}
		sleep(cleanup, time.Second)
	}
	return errors.Join(err, cleanup.Err())
}

func failingWebhook() *admissionv1.ValidatingWebhookConfiguration {
	fail, none := admissionv1.Fail, admissionv1.SideEffectClassNone
	return &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "chaos-flink-policy"},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name:                    "policy.chaos.bggitops.dev",
			ClientConfig:            admissionv1.WebhookClientConfig{URL: ptr.To(unreachableWebhook)},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](2),
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
				Rule: admissionv1.Rule{APIGroups: []string{v1alpha1.FlinkDeploymentGVK.Group}, APIVersions: []string{"*"},
					Resources: []string{"flinkdeployments", "flinkstatesnapshots"}},
			}},
		}},
	}
}
