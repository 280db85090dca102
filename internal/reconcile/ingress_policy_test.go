/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIngressHostMatchesThePattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, host string
		match         bool
	}{
		{"{{namespace}}.apps.example.com", "team-a.apps.example.com", true},
		{"{{namespace}}.apps.example.com", "Team-A.Apps.example.com", true},
		{"{{namespace}}.apps.example.com", "team-b.apps.example.com", false},
		{"{{namespace}}.apps.example.com", "x.team-a.apps.example.com", false},
		{"{{namespace}}.apps.example.com", "", false},
		{"{{name}}.{{namespace}}.apps.example.com", "job.team-a.apps.example.com", true},
		{"{{name}}.{{namespace}}.apps.example.com", "other.team-a.apps.example.com", false},
		{"*.{{namespace}}.apps.example.com", "blue-job.team-a.apps.example.com", true},
		{"*.{{namespace}}.apps.example.com", "*.team-a.apps.example.com", false},
		{"*.{{namespace}}.apps.example.com", "team-a.apps.example.com", false},
		{"*.{{namespace}}.apps.example.com", "a.b.team-a.apps.example.com", false},
	} {
		assert.Equal(t, tc.match, hostMatches(tc.pattern, tc.host, "job", "team-a"), "%s ~ %q", tc.pattern, tc.host)
	}
}

func TestIngressAnnotationsAreKeptByKeyOrPrefix(t *testing.T) {
	in := map[string]string{"a.io/x": "1", "b.io/y": "2", "b.io/z": "3", "c": "4"}
	kept, dropped := IngressPolicy{Annotations: []string{"a.io/x", "b.io/"}}.keepAnnotations(in)
	assert.Equal(t, map[string]string{"a.io/x": "1", "b.io/y": "2", "b.io/z": "3"}, kept)
	assert.Equal(t, []string{"c"}, dropped)
	kept, dropped = IngressPolicy{}.keepAnnotations(in)
	assert.Equal(t, in, kept, "no list: every annotation")
	assert.Empty(t, dropped)
	_, dropped = IngressPolicy{Annotations: []string{}}.keepAnnotations(in)
	assert.Len(t, dropped, 4, "an empty list: none")
}

// TestIngressTLSWithoutHostsIsRefused: a TLS entry without hosts is the
// Ingress controller's wildcard host (networking/v1: hosts "defaults to
// the wildcard host setting"), so it claims every host, as a rule
// without host does.
func TestIngressTLSWithoutHostsIsRefused(t *testing.T) {
	policy := IngressPolicy{HostPatterns: []string{"{{namespace}}.apps.example.com"}}
	ing := func(tls ...networkingv1.IngressTLS) *networkingv1.Ingress {
		return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "team-a"},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "team-a.apps.example.com"}}, TLS: tls}}
	}
	assert.NoError(t, policy.checkHosts(ing(networkingv1.IngressTLS{Hosts: []string{"team-a.apps.example.com"}, SecretName: "tls"})))
	err := policy.checkHosts(ing(networkingv1.IngressTLS{SecretName: "tls"}))
	assert.ErrorIs(t, err, errIngressHostNotAllowed)
	err = policy.checkHosts(ing(networkingv1.IngressTLS{Hosts: []string{"team-a.apps.example.com"}}, networkingv1.IngressTLS{SecretName: "tls"}))
	assert.ErrorIs(t, err, errIngressHostNotAllowed, "a second TLS entry without hosts")
}
