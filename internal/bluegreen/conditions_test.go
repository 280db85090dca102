/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conditions a decision reports.

// The active job that stops after the cut-over is reported not ready, with
// what the Flink operator says.
func TestReadyReportsAnActiveJobThatIsNotReady(t *testing.T) {
	w, _ := toActiveGreen(t, v1alpha1.UpgradeModeSavepoint)
	w.failChild(Green)
	w.step()
	w.expectCondition(v1alpha1.ReadyCondition, metav1.ConditionFalse, ReasonJobNotReady,
		"active FlinkDeployment orders-green is not ready (lifecycle FAILED, job FAILED)")
}
