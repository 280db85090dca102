/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"errors"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEveryAccountAJobRunsAsIsChecked: a job's pods run as the account
// of spec.serviceAccount unless the Flink configuration names another
// for the JobManager or the TaskManagers (those keys win over the one the
// operator sets), flat or nested; pod templates that name one are refused
// too. Only listed accounts pass.
func TestEveryAccountAJobRunsAsIsChecked(t *testing.T) {
	ten := Tenancy{FlinkAccounts: []string{"flink"}}
	for _, tc := range []struct {
		name, spec string
		refused    bool
	}{
		{"listed", "serviceAccount: flink\nflinkConfiguration: {kubernetes.service-account: flink}\n", false},
		{"none", "image: flink:1.20\n", false},
		{"spec account", "serviceAccount: ci-admin\n", true},
		{"jobmanager key", "serviceAccount: flink\nflinkConfiguration: {kubernetes.jobmanager.service-account: ci-admin}\n", true},
		{"taskmanager key", "serviceAccount: flink\nflinkConfiguration: {kubernetes.taskmanager.service-account: ci-admin}\n", true},
		{"generic key", "serviceAccount: flink\nflinkConfiguration: {kubernetes.service-account: ci-admin}\n", true},
		{"nested", "serviceAccount: flink\nflinkConfiguration: {kubernetes: {jobmanager: {service-account: ci-admin}}}\n", true},
		{"partly nested", "serviceAccount: flink\nflinkConfiguration: {kubernetes: {jobmanager.service-account: ci-admin}}\n", true},
		{"padded key", "serviceAccount: flink\nflinkConfiguration: {' kubernetes.jobmanager.service-account ': ci-admin}\n", true},
		{"pod template", "serviceAccount: flink\npodTemplate: {spec: {serviceAccountName: ci-admin}}\n", true},
		{"jobmanager pod template", "serviceAccount: flink\njobManager: {podTemplate: {spec: {serviceAccountName: ci-admin}}}\n", true},
		{"taskmanager pod template", "serviceAccount: flink\ntaskManager: {podTemplate: {spec: {serviceAccountName: ci-admin}}}\n", true},
		{"listed pod template", "serviceAccount: flink\npodTemplate: {spec: {serviceAccountName: flink}}\n", false},
		{"pod template, deprecated field", "serviceAccount: flink\ntaskManager: {podTemplate: {spec: {serviceAccount: ci-admin}}}\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := map[string]any{}
			if err := yaml.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			err := ten.flinkAccounts(spec)
			if got := errors.Is(err, ErrAccountNotAllowed); got != tc.refused {
				t.Fatalf("refused = %v, want %v (%v)", got, tc.refused, err)
			}
		})
	}
}
