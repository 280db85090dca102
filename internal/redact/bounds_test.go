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
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// writeFiles writes name → content under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(data), 0o600))
	}
}

// fanOut is a kustomization that fans one file out to many secret
// values: a build that fails (missing.yaml) with a secretGenerator naming
// each of files r times.
func fanOut(r int, files ...string) string {
	var k strings.Builder
	k.WriteString("resources: [missing.yaml]\nsecretGenerator:\n- name: s\n  files:\n")
	for i := range r {
		for j, f := range files {
			fmt.Fprintf(&k, "  - k%d-%d=%s\n", i, j, f)
		}
	}
	return k.String()
}

// heapGrowth is the live heap that keep(), run between two collections,
// leaves behind while what it returns is alive.
func heapGrowth(keep func() any) (int64, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := keep()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), kept
}

// TestGeneratorScanFanOutBounded: a 1 MiB file named 60 times by one
// failing kustomization is read once and kept as anchors (at most 40
// forms, under 16 KiB, under 4 MiB of heap retained), not once per name;
// its value, and the values of the other generator, are still scrubbed.
func TestGeneratorScanFanOutBounded(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("x", 1<<20)
	writeFiles(t, root, map[string]string{"big.txt": big, "kustomization.yaml": fanOut(60, "big.txt"),
		"app/kustomization.yaml": "secretGenerator:\n- name: db\n  literals: [password=gen-Passw0rd]\n  files: [key.pem]\n",
		"app/key.pem":            "-----BEGIN KEY-----\nMIIBkeyLINE\n-----END KEY-----\n"})

	var c *collector
	grown, kept := heapGrowth(func() any {
		c = generatorValues(root)
		return newRecord(c)
	})
	t.Logf("forms=%d cost=%d bytes retained=%d bytes", c.forms, c.cost, grown)
	require.False(t, c.over)
	assert.LessOrEqual(t, c.forms, 40)
	assert.Less(t, c.cost, 16<<10)
	assert.Less(t, grown, int64(4<<20), "retained heap")

	var s Scrubber
	s.take(kept.(*record), "")
	assert.Equal(t, "a *** b", s.Scrub("a "+big+" b"))
	assert.Equal(t, "data ***", s.Scrub("data "+base64.StdEncoding.EncodeToString([]byte(big))))
	assert.NotContains(t, s.Scrub("cut "+big[:5000]), "xxxx", "cut short, what is there is Redacted")
	for _, v := range []string{"gen-Passw0rd", "MIIBkeyLINE"} {
		assert.Equal(t, "a *** b", s.Scrub("a "+v+" b"), v)
	}
}

// TestGeneratorScanOverBoundsWithheld: a checkout whose generators read
// more than the scan's bounds gets its messages withheld, whole, while the
// build fails; a good build clears it.
func TestGeneratorScanOverBoundsWithheld(t *testing.T) {
	reg := NewRegistry()
	distinct := map[string]string{}
	var names []string
	for i := range 10 {
		name := fmt.Sprintf("big%d.txt", i)
		distinct[name], names = strings.Repeat(strconv.Itoa(i), 1<<20), append(names, name)
	}
	distinct["kustomization.yaml"] = fanOut(1, names...)
	var lines strings.Builder
	for i := range maxSourceForms + 100 {
		fmt.Fprintf(&lines, "%x\n", 1<<16+i) // 6 bytes a line: under maxScannedFileBytes
	}
	flowList := func(n int) string {
		return "secretGenerator: []\nresources: [" + strings.Repeat("a,", n/2) + "a]\n"
	}
	parsed := map[string]string{}
	for i := range 5 {
		parsed[fmt.Sprintf("k%d/kustomization.yaml", i)] = flowList(maxParsedFileBytes - 100)
	}
	for what, files := range map[string]map[string]string{
		"bytes":                     distinct,
		"forms":                     {"kustomization.yaml": fanOut(1, "lines.txt"), "lines.txt": lines.String()},
		"a file too large":          {"kustomization.yaml": fanOut(1, "big.txt"), "big.txt": strings.Repeat("y", maxScannedFileBytes+1)},
		"a kustomization too large": {"kustomization.yaml": flowList(maxParsedFileBytes)},
		"kustomizations too large":  parsed,
		"too many files named":      {"kustomization.yaml": "secretGenerator:\n- name: x\n  envs: [" + strings.Repeat("a,", maxScannedFiles) + "a]\n"},
	} {
		t.Run(what, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, files)
			c := generatorValues(root)
			assert.True(t, c.over)

			src := types.NamespacedName{Namespace: "withheld-" + strconv.FormatInt(time.Now().UnixNano(), 36), Name: "g"}
			reg.NoteBuild(src, root, nil, errors.New("failed"))
			err := fmt.Errorf("kustomize build failed: %w", errors.New("invalid literal line-7 "+distinct["big0.txt"][:100]))
			scrubbed := reg.ForSource(src).ScrubError(err)
			assert.Equal(t, withheldMessage, scrubbed.Error())
			assert.ErrorIs(t, scrubbed, errors.Unwrap(err))
			assert.Equal(t, withheldMessage, reg.ForNamespace(src.Namespace).And(reg.ForSource(src)).Scrub("x"))

			reg.NoteBuild(src, root, nil, nil)
			assert.Equal(t, "line-7", reg.ForSource(src).Scrub("line-7"), "a good build clears it")
		})
	}
	assert.Contains(t, withheldMessage, "too large to scrub")
}

// TestGeneratorScanParsesOnlyGenerators: a kustomization that cannot
// generate a Secret is not parsed (a large one costs nothing); one that
// spells secretGenerator in another case is (keys match fields regardless
// of case).
func TestGeneratorScanParsesOnlyGenerators(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"big/kustomization.yaml":   "resources: [" + strings.Repeat("a,", maxParsedFileBytes) + "a]\n",
		"upper/kustomization.yaml": "SECRETGENERATOR:\n- name: x\n  literals: [a=Upper-Case-S3cret]\n",
	})
	c := generatorValues(root)
	require.False(t, c.over)
	assert.Equal(t, "a ***", scrubberOf(c).Scrub("a Upper-Case-S3cret"))
	assert.False(t, mayGenerateSecrets([]byte("resources: [a.yaml]\n")))
	for _, k := range []string{"SecretGenerator: []", "\"secret\\u0047enerator\": []", "? !!binary c2VjcmV0R2VuZXJhdG9y\n: []"} {
		assert.True(t, mayGenerateSecrets([]byte(k)), k)
	}
}

// renderedSecret is a rendered Secret in ns holding value.
func renderedSecret(ns, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "s", "namespace": ns},
		"stringData": map[string]any{"k": value}}}
}

// TestRenderedOverBoundWithheld: a render whose Secrets hold more forms
// than a source may keep has its messages, and those of the namespaces
// its Secrets went to, withheld; a smaller render scrubs again.
func TestRenderedOverBoundWithheld(t *testing.T) {
	reg := NewRegistry()
	src := types.NamespacedName{Namespace: "render-" + strconv.FormatInt(time.Now().UnixNano(), 36), Name: "g"}
	other := src.Namespace + "-other"
	var lines strings.Builder
	for i := range maxSourceForms {
		fmt.Fprintf(&lines, "secret-line-%d\n", i)
	}
	reg.NoteRendered(src, []*unstructured.Unstructured{renderedSecret(src.Namespace, "small-Secret"), renderedSecret(other, lines.String())})
	assert.Equal(t, withheldMessage, reg.ForSource(src).Scrub("secret-line-7"))
	assert.Equal(t, withheldMessage, reg.ForNamespace(other).Scrub("secret-line-7"))
	assert.Equal(t, "nothing", reg.ForNamespace(src.Namespace+"-third").Scrub("nothing"))

	reg.NoteRendered(src, []*unstructured.Unstructured{renderedSecret(other, "small-Secret")})
	assert.Equal(t, "a ***", reg.ForSource(src).Scrub("a small-Secret"))
	assert.Equal(t, "a ***", reg.ForNamespace(other).Scrub("a small-Secret"))
	assert.Equal(t, "a small-Secret", reg.ForNamespace(src.Namespace).Scrub("a small-Secret"), "not in that namespace any more")
}

// TestRegistryBound: over its bound, the registry withholds its largest
// sources first; the others are scrubbed as before.
func TestRegistryBound(t *testing.T) {
	reg := newRegistry(64 << 10)
	small, large := types.NamespacedName{Namespace: "a", Name: "small"}, types.NamespacedName{Namespace: "b", Name: "large"}
	reg.NoteRendered(small, []*unstructured.Unstructured{renderedSecret("a", "small-Secret")})
	var lines strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&lines, "large-secret-%d\n", i)
	}
	reg.NoteRendered(large, []*unstructured.Unstructured{renderedSecret("b", lines.String())})
	assert.Equal(t, withheldMessage, reg.ForSource(large).Scrub("large-secret-7"))
	assert.Equal(t, "a ***", reg.ForSource(small).Scrub("a small-Secret"))
	assert.LessOrEqual(t, reg.cost, reg.maxCost)
}

// TestLongValueAnchors: a value longer than maxWholeForm is kept as the
// anchors of its spellings and its lines; it is still Redacted whole in
// each spelling, cut short at either end, and line by line.
func TestLongValueAnchors(t *testing.T) {
	var b strings.Builder
	b.WriteString("-----BEGIN CERTIFICATE-----\n")
	for i := range 200 {
		fmt.Fprintf(&b, "%064d\n", i*7919)
	}
	b.WriteString("-----END CERTIFICATE-----\n")
	v := b.String()
	forms := valueForms(v)
	cost := 0
	for _, f := range forms {
		cost += len(f.text)
	}
	t.Logf("%d bytes: %d forms, %d bytes of them", len(v), len(forms), cost)
	assert.Less(t, cost, len(v)+2<<10, "about its lines, not 8 times it")

	s := newScrubber(forms)
	q := strconv.Quote(v)
	for what, msg := range map[string]string{
		"raw":         "value " + v + " end",
		"base64":      "value " + base64.StdEncoding.EncodeToString([]byte(v)) + " end",
		"quoted":      "value " + q + " end",
		"end cut":     "value " + v[:len(v)/2],
		"start cut":   v[len(v)/2:] + " end",
		"quoted, cut": "value " + q[:len(q)/3],
	} {
		got := s.Scrub(msg)
		assert.NotContains(t, got, fmt.Sprintf("%064d", 100*7919), what)
		assert.NotContains(t, got, fmt.Sprintf("%064d", 199*7919), what)
	}
	assert.Equal(t, "value *** end", s.Scrub("value "+v+" end"))
	assert.Equal(t, `value "***" end`, s.Scrub("value "+q+" end"))
	assert.Equal(t, "line *** here", s.Scrub(fmt.Sprintf("line %064d here", 50*7919)))
}

// TestScrubWorkBound: forms that share their first bytes with a long
// message would make a scrub quadratic; past maxScrubWork the message is
// withheld, quickly.
func TestScrubWorkBound(t *testing.T) {
	var forms []form
	for n := 8; n <= maxWholeForm; n++ {
		forms = append(forms, form{text: strings.Repeat("a", n-1) + "!"})
	}
	s := newScrubber(forms)
	start := time.Now()
	assert.Equal(t, withheldMessage, s.Scrub(strings.Repeat("a", 1<<16)))
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, "x ***", s.Scrub("x aaaaaaa!"), "a short message is scrubbed")
}

// pemOf is a PEM block of n lines, distinct by seed.
func pemOf(kind string, n, seed int) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	for i := range n {
		fmt.Fprintf(&b, "%064x\n", uint64(seed)*1000003+uint64(i)*7919)
	}
	b.WriteString("-----END " + kind + "-----\n")
	return b.String()
}

// BenchmarkScrub: a 30 KiB message, scrubbed of the values of a render of
// 300 TLS Secrets (certificate, key, CA) and 300 passwords.
func BenchmarkScrub(b *testing.B) {
	reg := newRegistry(maxRegistryBytes)
	src := types.NamespacedName{Namespace: "bench", Name: "g"}
	var objs []*unstructured.Unstructured
	for i := range 300 {
		for _, v := range []string{pemOf("CERTIFICATE", 20, 3*i), pemOf("PRIVATE KEY", 26, 3*i+1), pemOf("CERTIFICATE", 18, 3*i+2), fmt.Sprintf("passw0rd-%d-xyz", i)} {
			objs = append(objs, renderedSecret("bench", v))
		}
	}
	reg.NoteRendered(src, objs)
	require.False(b, reg.ForSource(src).withheld)
	msg := strings.Repeat("the API server says Invalid value: \"passw0rd-17-xyz\"; ", 600)
	require.NotContains(b, reg.ForSource(src).Scrub(msg), "passw0rd")
	b.ResetTimer()
	for range b.N {
		reg.ForSource(src).Scrub(msg)
	}
}

// TestRegistryConcurrent: scrubbers in use while their records are
// replaced and withheld (run with -race); in the end each source's values
// are scrubbed or its messages withheld.
func TestRegistryConcurrent(t *testing.T) {
	reg := newRegistry(8 << 10)
	srcs := []types.NamespacedName{{Namespace: "a", Name: "x"}, {Namespace: "b", Name: "y"}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			src := srcs[i%2]
			reg.NoteRendered(src, []*unstructured.Unstructured{renderedSecret(src.Namespace, strings.Repeat(fmt.Sprintf("value-%d\n", i), 1+i%40))})
		}
	}()
	for {
		select {
		case <-done:
			assert.LessOrEqual(t, reg.cost, reg.maxCost)
			assert.NotContains(t, reg.ForSource(srcs[0]).Scrub("value-198"), "value-198", "scrubbed or withheld")
			assert.NotContains(t, reg.ForSource(srcs[1]).Scrub("value-199"), "value-199", "scrubbed or withheld")
			return
		default:
			reg.ForSource(srcs[0]).And(reg.ForNamespace("b")).Scrub("value-1 value-2")
		}
	}
}
