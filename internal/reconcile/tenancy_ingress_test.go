/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// TestAChildIngressIsCheckedAsTheFlinkOperatorWritesIt: the host of a
// child's spec.ingress is its template with {{name}} the child's name and
// the colour's prefix (what the Flink operator writes), its tls hosts
// too; the patterns' {{name}} is the parent's. Annotations outside the
// list are refused. No pattern: any host.
func TestAChildIngressIsCheckedAsTheFlinkOperatorWritesIt(t *testing.T) {
	policy := IngressPolicy{HostPatterns: []string{"*.{{namespace}}.apps.example.com", "*.{{name}}.apps.example.com"},
		Annotations: []string{"nginx.ingress.kubernetes.io/rewrite-target"}}
	for _, tc := range []struct {
		name, ingress string
		policy        IngressPolicy
		want          error
	}{
		{"none", `null`, policy, nil},
		{"namespace subdomain", `{"template":"{{name}}.{{namespace}}.apps.example.com"}`, policy, nil},
		{"the parent's name in a pattern", `{"template":"ui.job.apps.example.com"}`, policy, nil},
		{"the child's name is not the parent's", `{"template":"*.{{name}}.apps.example.com"}`, policy, errIngressHostNotAllowed},
		{"another namespace", `{"template":"{{name}}.victim.apps.example.com"}`, policy, errIngressHostNotAllowed},
		{"prefix makes another namespace's host", `{"template":"team.apps.example.com"}`,
			IngressPolicy{HostPatterns: []string{"{{namespace}}.apps.example.com"}}, errIngressHostNotAllowed},
		{"with path", `{"template":"{{name}}.{{namespace}}.apps.example.com/ui"}`, policy, nil},
		{"path only: every host", `{"template":"/{{namespace}}/{{name}}(/|$)(.*)"}`, policy, errIngressHostNotAllowed},
		{"path only, no pattern", `{"template":"/{{namespace}}/{{name}}(/|$)(.*)"}`, IngressPolicy{}, nil},
		{"any host without pattern", `{"template":"grafana.example.com"}`, IngressPolicy{}, nil},
		{"tls host", `{"template":"{{name}}.{{namespace}}.apps.example.com","tls":[{"hosts":["grafana.example.com"]}]}`, policy, errIngressHostNotAllowed},
		{"allowed annotation", `{"template":"x.{{namespace}}.apps.example.com","annotations":{"nginx.ingress.kubernetes.io/rewrite-target":"/"}}`, policy, nil},
		{"snippet annotation", `{"template":"x.{{namespace}}.apps.example.com","annotations":{"nginx.ingress.kubernetes.io/server-snippet":"x"}}`,
			policy, errIngressAnnotationsNotAllowed},
		{"snippet annotation, no pattern", `{"template":"x","annotations":{"nginx.ingress.kubernetes.io/server-snippet":"x"}}`,
			IngressPolicy{Annotations: []string{}}, errIngressAnnotationsNotAllowed},
		{"not an IngressSpec", `{"template":3}`, policy, errInvalidIngress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []bluegreen.Color{bluegreen.Blue, bluegreen.Green} {
				ingress := bluegreen.ChildIngress(&apiextensionsv1.JSON{Raw: []byte(tc.ingress)}, c)
				err := tc.policy.checkChild(ingress, bluegreen.ChildName("job", c), "job", "team")
				if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
					t.Fatalf("%s: got %v, want %v", c, err, tc.want)
				}
			}
		})
	}
}
