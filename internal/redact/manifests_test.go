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

// TestSecretKindSpelledAcrossLinesIsParsed: a kind YAML reads as Secret
// from a block scalar, after a comment, or from a double-quoted string
// broken by an escaped newline is a Secret to kustomize too, so its
// manifest is parsed and its values scrubbed.
func TestSecretKindSpelledAcrossLinesIsParsed(t *testing.T) {
	for name, kind := range map[string]string{
		"folded":          ">-\n  Secret",
		"literal":         "|-\n  Secret",
		"comment":         "# the kind\n  Secret",
		"escaped newline": "\"Sec\\\n  ret\"",
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, map[string]string{
				"kustomization.yaml": "resources: [s.yaml]\n",
				"s.yaml":             "apiVersion: v1\nkind: " + kind + "\nmetadata: {name: s}\nstringData: {password: Hidden-Value-1}\n",
			})
			s := scrubberOf(generatorValues(root))
			assert.Equal(t, "a "+Redacted+" b", s.Scrub("a Hidden-Value-1 b"))
		})
	}
}

// TestSecretWithADuplicateKindKeyIsParsed: kustomize reads the first of
// two kind keys ("kind: Secret" then "kind: ConfigMap" is a Secret to it,
// and its node is printed when the build fails on it), so its values are
// scrubbed.
func TestSecretWithADuplicateKindKeyIsParsed(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"kustomization.yaml": "resources: [s.yaml]\n",
		"s.yaml":             "apiVersion: v1\nkind: Secret\nkind: ConfigMap\nmetadata: {name: db}\nstringData: [Dup-S3cret-Value]\n",
	})
	assert.Equal(t, "a "+Redacted+" b", scrubberOf(generatorValues(root)).Scrub("a Dup-S3cret-Value b"))
}

// TestSecretKeysAreNotScrubbed: a Secret's keys (password, token) are
// words of ordinary messages, not values.
func TestSecretKeysAreNotScrubbed(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"s.yaml": "kind: Secret\nstringData: {password: Key-Test-Value}\n"})
	s := scrubberOf(generatorValues(root))
	assert.Equal(t, "a "+Redacted+" b", s.Scrub("a Key-Test-Value b"))
	assert.Equal(t, "check the password", s.Scrub("check the password"))
}
