/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The pull requests against examples/repo-layout that the diff tests run, with
// the action each one causes.

package cli

import (
	"bggitops.dev/bg-gitops/internal/review"
)

const (
	fbgdPatch     = "overlays/production/flinkbluegreendeployment-patch.yaml"
	prodKustom    = "overlays/production/kustomization.yaml"
	prodConfigMap = "overlays/production/configmap-patch.yaml"
	baseKustom    = "base/kustomization.yaml"
	baseSecret    = "base/secret.yaml"
	oldPassword   = "Y2hhbmdlLW1l" // change-me
	// newPassword must never appear in a diff, in any encoding.
	newPassword       = "s3cr3t-n3w-passw0rd"
	newPasswordBase64 = "czNjcjN0LW4zdy1wYXNzdzByZA=="
)

// prCase is a pull request against examples/repo-layout and what diff
// must announce for the FlinkBlueGreenDeployment (empty: not touched).
type prCase struct {
	name   string
	change func(r *prRepo)
	action review.Action
}

var prCases = []prCase{
	{"image", func(r *prRepo) {
		r.replace(fbgdPatch, "image: flink:1.20.1-java17", "image: flink:1.20.2-java17")
	}, review.ActionTransitionSavepoint},
	{"parallelism", func(r *prRepo) {
		r.replace(fbgdPatch, "      flinkConfiguration:\n", "      flinkConfiguration:\n        parallelism.default: \"8\"\n")
	}, review.ActionPatch},
	{"upgrade-mode", func(r *prRepo) {
		r.replace(fbgdPatch, "      job:\n        parallelism: 8\n", "      job:\n        parallelism: 8\n        upgradeMode: last-state\n")
	}, review.ActionPatch},
	{"suspend", func(r *prRepo) {
		r.replace(fbgdPatch, "      job:\n        parallelism: 8\n", "      job:\n        parallelism: 8\n        state: suspended\n")
	}, review.ActionSuspend},
	{"configuration", func(r *prRepo) {
		r.replace(fbgdPatch, `bggitops.dev/savepoint-timeout: "30 min"`, `bggitops.dev/savepoint-timeout: "45 min"`)
	}, review.ActionNothing},
	{"redeploy", func(r *prRepo) {
		r.replace(fbgdPatch, "      job:\n        parallelism: 8\n", "      job:\n        parallelism: 8\n        savepointRedeployNonce: 1\n")
	}, review.ActionSavepointRedeploy},
	{"kafka", func(r *prRepo) {
		// The job's arguments are copied from its ConfigMap: a new Kafka
		// address is a new job spec.
		r.replace(prodConfigMap, "KAFKA_BOOTSTRAP_SERVERS: kafka-bootstrap.kafka.svc:9092", "KAFKA_BOOTSTRAP_SERVERS: kafka-2-bootstrap.kafka.svc:9092")
	}, review.ActionTransitionSavepoint},
	{"removed-secret", func(r *prRepo) {
		r.replace(baseKustom, "  - secret.yaml\n", "")
	}, ""},
	{"secret", func(r *prRepo) {
		r.replace(baseSecret, "KAFKA_PASSWORD: "+oldPassword, "KAFKA_PASSWORD: "+newPasswordBase64)
	}, ""},
}
