/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestSecretInAFileOfAnyNameIsKnownAfterAFailedBuild: a kustomization may
// name a manifest of any name (resources: [secret.txt]), so a plain
// Secret's values are scrubbed whatever its file is called; binary files,
// files over the size a Secret can have, and links out of the checkout
// are skipped without withholding the messages.
func TestSecretInAFileOfAnyNameIsKnownAfterAFailedBuild(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	secret := func(v string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: " + v + "}\n"
	}
	writeFiles(t, root, map[string]string{
		"kustomization.yaml": "resources: [secret.txt, base/creds, missing.yaml]\n",
		"secret.txt":         secret("Txt-S3cret-Value"),
		"base/creds":         secret("No-Ext-S3cret-Value"),
		"image.png":          "\x89PNG\r\n\x1a\n\x00\x00" + secret("Binary-Value"),
		"big.txt":            strings.Repeat("#", maxScannedFileBytes) + "\n" + secret("Big-Value"),
	})
	writeFiles(t, outside, map[string]string{"s.txt": secret("Outside-Value")})
	require.NoError(t, os.Symlink(filepath.Join(outside, "s.txt"), filepath.Join(root, "link.txt")))
	c := generatorValues(root)
	require.False(t, c.over, "skipped files are no bound hit")
	s := scrubberOf(c)
	for _, v := range []string{"Txt-S3cret-Value", "No-Ext-S3cret-Value"} {
		assert.Equal(t, "a "+Redacted+" b", s.Scrub("a "+v+" b"), v)
	}
	for _, v := range []string{"Binary-Value", "Big-Value", "Outside-Value"} {
		assert.Equal(t, v, s.Scrub(v), "not read: "+v)
	}
}
