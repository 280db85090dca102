/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"strings"
	"testing"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
)

func TestPlan(t *testing.T) {
	nonce := int64(1)
	for _, tc := range []struct {
		name       string
		base, spec func(j *v1alpha1.JobSpec, s *v1alpha1.FlinkDeploymentSpec)
		want       Rollout
	}{
		{"unchanged", nil, nil, RolloutNothing},
		{"savepoint path alone", nil, func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) { j.InitialSavepointPath = "s3://x" }, RolloutNothing},
		{"upgrade mode", nil, func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) {
			j.UpgradeMode = v1alpha1.UpgradeModeSavepoint
		}, RolloutInPlace},
		{"suspend", nil, func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) { j.State = v1alpha1.JobStateSuspended }, RolloutSuspend},
		{"resume", func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) { j.State = v1alpha1.JobStateSuspended }, nil, RolloutResume},
		{"image while suspended", func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) { j.State = v1alpha1.JobStateSuspended },
			func(j *v1alpha1.JobSpec, s *v1alpha1.FlinkDeploymentSpec) {
				j.State, s.Image = v1alpha1.JobStateSuspended, "flink:2"
			}, RolloutInPlace},
		{"redeploy", nil, func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) { j.SavepointRedeployNonce = &nonce }, RolloutSavepointRedeploy},
		{"image, stateless", nil, func(_ *v1alpha1.JobSpec, s *v1alpha1.FlinkDeploymentSpec) { s.Image = "flink:2" }, RolloutBlueGreenStateless},
		{"image, last-state", nil, func(j *v1alpha1.JobSpec, s *v1alpha1.FlinkDeploymentSpec) {
			j.UpgradeMode, s.Image = v1alpha1.UpgradeModeLastState, "flink:2"
		}, RolloutBlueGreenSavepoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, d := Plan(planSpec(tc.base), planSpec(tc.spec)); got != tc.want {
				t.Errorf("Plan = %s (%s %v), want %s", got, d.Type, d.Fields, tc.want)
			}
		})
	}
}

func planSpec(edit func(j *v1alpha1.JobSpec, s *v1alpha1.FlinkDeploymentSpec)) *v1alpha1.FlinkBlueGreenDeploymentSpec {
	s := &v1alpha1.FlinkBlueGreenDeploymentSpec{}
	s.Template.Spec = v1alpha1.FlinkDeploymentSpec{Image: "flink:1", Job: &v1alpha1.JobSpec{JarURI: "local:///job.jar"}}
	if edit != nil {
		edit(s.Template.Spec.Job, &s.Template.Spec)
	}
	return s
}

func TestPlanOfSpecsWithoutJob(t *testing.T) {
	base := planSpec(nil)
	base.Template.Spec.Job = nil
	if r, d := Plan(base, planSpec(nil)); r != RolloutBlueGreenStateless || strings.Join(d.Fields, ",") != "job.jarURI" {
		t.Errorf("Plan from a base without job = %s %+v", r, d)
	}
	base = planSpec(func(j *v1alpha1.JobSpec, _ *v1alpha1.FlinkDeploymentSpec) { j.InitialSavepointPath = "/x" })
	spec := planSpec(nil)
	spec.Template.Spec.Job = nil
	if got := withSavepointPath(base, spec); got.Template.Spec.Job.InitialSavepointPath != "" {
		t.Errorf("withSavepointPath to a spec without job keeps %q", got.Template.Spec.Job.InitialSavepointPath)
	}
	if got := withSavepointPath(base, nil); got != base {
		t.Errorf("withSavepointPath(base, nil) is not base")
	}
}
