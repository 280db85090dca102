/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/internal/status"
)

func TestValueForms(t *testing.T) {
	s := newScrubber(valueForms("pa\"ss\nword-line-two"))
	for _, msg := range []string{
		`raw pa"ss` + "\nword-line-two",
		"base64 " + base64.StdEncoding.EncodeToString([]byte("pa\"ss\nword-line-two")),
		`quoted "pa\"ss\nword-line-two"`,
		"a line of it: word-line-two",
	} {
		got := s.Scrub(msg)
		assert.NotContains(t, got, "word-line-two", msg)
		assert.Contains(t, got, Redacted, msg)
	}
	assert.Empty(t, valueForms("yes"), "too short to be worth hiding")
	assert.Equal(t, "a *** b", newScrubber(append(valueForms("secret"), valueForms("secret-longer")...)).Scrub("a secret-longer b"),
		"the longer value is replaced whole")

	err := fmt.Errorf("wrapped: %w", &status.RateLimitedError{Message: "token secret"})
	scrubbed := newScrubber(valueForms("secret")).ScrubError(err)
	assert.Equal(t, "wrapped: rate limited, retry after 0s: token ***", scrubbed.Error())
	var rl *status.RateLimitedError
	assert.True(t, errors.As(scrubbed, &rl), "classification by type still works")
}

// TestGeneratorValues: after a failed build the values the
// secretGenerators read are known (a malformed literal whole), files
// outside the checkout are not read.
func TestGeneratorValues(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write := func(dir, name, data string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	write(outside, "stolen.env", "OTHER=other-tenant-value\n")
	write(root, "base/db.env", "USER=app\nPASSWORD=env-Passw0rd\n")
	write(root, "base/key.pem", "-----BEGIN KEY-----\nMIIBkeyLINE\n-----END KEY-----\n")
	write(root, "base/kustomization.yaml", `secretGenerator:
- name: db
  literals: ["password:literal-Passw0rd", "token=literal-T0ken"]
  envs: [db.env, ../../`+filepath.Base(outside)+`/stolen.env]
  files: [tls.key=key.pem]
`)
	require.NoError(t, os.Symlink(filepath.Join(outside, "stolen.env"), filepath.Join(root, "base", "link.env")))
	write(root, "overlay/kustomization.yaml", "resources: [../base]\nsecretGenerator:\n- name: x\n  envs: [../base/link.env]\n")

	s := scrubberOf(generatorValues(root))
	for _, v := range []string{"password:literal-Passw0rd", "literal-T0ken", "env-Passw0rd", "MIIBkeyLINE"} {
		assert.Equal(t, "a "+Redacted+" b", s.Scrub("a "+v+" b"), v)
	}
	assert.Equal(t, "other-tenant-value", s.Scrub("other-tenant-value"), "read outside the checkout")
}

// TestScrubberLeavesWordsAndNamesAlone: a value is replaced where it
// stands on its own, not inside a longer word; and a Secret value that is
// also the name of a rendered object (a Kafka user named after its job)
// is not scrubbed from messages about that object.
func TestScrubberLeavesWordsAndNamesAlone(t *testing.T) {
	s := newScrubber(valueForms("test"))
	assert.Equal(t, "image latest, *** and user:***@host, \"***\", ***", s.Scrub(`image latest, test and user:test@host, "test", test`))
	assert.Equal(t, "***-blue", s.Scrub("test-blue"), "a delimiter is not part of a word")
	assert.Equal(t, "a ***", newScrubber(valueForms("p@ss!")).Scrub("a p@ss!"), "a value that ends in punctuation")

	id := types.NamespacedName{Namespace: "names-" + fmt.Sprint(time.Now().UnixNano()), Name: "repo"}
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "state-machine-kafka", "namespace": id.Namespace},
		"data": map[string]any{
			"KAFKA_USERNAME": base64.StdEncoding.EncodeToString([]byte("state-machine")),
			"KAFKA_PASSWORD": base64.StdEncoding.EncodeToString([]byte("change-me")),
		}}}
	job := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "bggitops.dev/v1alpha1", "kind": "FlinkBlueGreenDeployment",
		"metadata": map[string]any{"name": "state-machine", "namespace": id.Namespace}}}
	reg := NewRegistry()
	reg.NoteRendered(id, []*unstructured.Unstructured{secret, job})
	assert.Equal(t, "state-machine-blue active, password ***", reg.ForNamespace(id.Namespace).Scrub("state-machine-blue active, password change-me"))
}

// scrubberOf is the Scrubber of what c collected, as the registry keeps it.
func scrubberOf(c *collector) Scrubber {
	var s Scrubber
	s.take(newRecord(c), "")
	return s
}
