/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPlainSecretValuesOfTheCheckoutAreKnownAfterAFailedBuild: the values
// of the Secrets in a checkout's manifests, however the kind is spelled
// and whatever shape their data has, are scrubbed; a ConfigMap's are not.
func TestPlainSecretValuesOfTheCheckoutAreKnownAfterAFailedBuild(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"kustomization.yaml": "resources: [a.yaml, b.json, c.yml]\n",
		"a.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {k: &k Secret}}\ndata: {plain: ConfigMap-Value}\n---\nkind: Secret\nstringData:\n  password: Str1ng-Data-Value\ndata:\n  token: " + "QjY0LURlY29kZWQtVmFsdWU=" + "\n",
		"b.json":             `{"kind": "Secret", "data": {"k": "SnNvbi1WYWx1ZQ=="}}`,
		"c.yml":              "metadata: {name: &k Secret}\nkind: *k\nstringData: [Seq-Value, {nested: Nested-Value}]\n---\nkind: \"Secr\\x65t\"\nstringData: {x: Escaped-Kind-Value}\n",
	})
	s := scrubberOf(generatorValues(root))
	for _, v := range []string{"Str1ng-Data-Value", "B64-Decoded-Value", "Json-Value", "Seq-Value", "Nested-Value", "Escaped-Kind-Value"} {
		assert.Equal(t, "a "+Redacted+" b", s.Scrub("a "+v+" b"), v)
	}
	assert.Equal(t, "ConfigMap-Value", s.Scrub("ConfigMap-Value"), "not a Secret's")
	assert.False(t, mayHoldSecrets([]byte("kind: ConfigMap\ndata: {secret: x}\n")), "a ConfigMap is not parsed")
	assert.True(t, mayHoldSecrets([]byte("kind: !!str Secret\n")))
}
