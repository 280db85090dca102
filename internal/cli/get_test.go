/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests of `bg-gitops get`: the GitRepository table, output formats, completion
// and errors; masker, which the get tests share.

package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// masker replaces what differs from run to run: namespaces, commits (the
// two of the test by name), job ids and other hex ids, instants and
// durations. Columns are aligned to the width of what they hold, so runs
// of blanks are squeezed too.
type masker struct {
	names map[string]string
	shas  map[string]string
}

var (
	maskInstant  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	maskHex      = regexp.MustCompile(`\b[0-9a-f]{6,}\b`)
	maskDuration = regexp.MustCompile(`\b\d+(\.\d+)?[smhdy](\d+[smh])?\b`)
	maskBlanks   = regexp.MustCompile(` {2,}`)
)

func (m masker) mask(s string) string {
	for name, with := range m.names {
		s = strings.ReplaceAll(s, name, with)
	}
	for sha, with := range m.shas {
		s = regexp.MustCompile(regexp.QuoteMeta(sha[:minShortSHA])+`[0-9a-f]*`).ReplaceAllString(s, with)
	}
	s = maskInstant.ReplaceAllString(s, "<time>")
	s = maskHex.ReplaceAllString(s, "<hex>")
	s = maskDuration.ReplaceAllString(s, "<d>")
	return maskBlanks.ReplaceAllString(s, "  ")
}

func TestGetGitRepositoryTable(t *testing.T) {
	env := cluster(t)
	apps, jobs := newNamespace(t, env), newNamespace(t, env)
	r := gitRepo(t, "one")
	sha := r.git("rev-parse", "HEAD")
	for _, gr := range []*v1alpha1.GitRepository{
		{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: apps},
			Spec: v1alpha1.GitRepositorySpec{URL: "file://" + r.dir, Path: "./app", TargetNamespace: apps,
				Interval: &metav1.Duration{Duration: time.Hour}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "jobs", Namespace: jobs, Annotations: map[string]string{v1alpha1.SuspendAnnotation: "true"}},
			Spec: v1alpha1.GitRepositorySpec{URL: "https://git.example/jobs.git", Interval: &metav1.Duration{Duration: time.Hour}}},
	} {
		require.NoError(t, env.Client.Create(context.Background(), gr))
	}
	readyIs := func(ns, name string, status metav1.ConditionStatus) func() bool {
		return func() bool {
			gr := &v1alpha1.GitRepository{}
			if env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, gr) != nil {
				return false
			}
			c := apimeta.FindStatusCondition(gr.Status.Conditions, v1alpha1.ReadyCondition)
			return c != nil && c.Status == status && c.ObservedGeneration == gr.Generation
		}
	}
	eventually(t, "app ready", readyIs(apps, "app", metav1.ConditionTrue))
	eventually(t, "jobs suspended", readyIs(jobs, "jobs", metav1.ConditionFalse))

	m := masker{names: map[string]string{apps: "<apps>", jobs: "<jobs>"}, shas: map[string]string{sha: "<commit>"}}
	res := runCLI(t, "get", "gitrepository", "-A", "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, res.code, res.stderr)
	// Other tests' namespaces share the cluster: keep the header and ours.
	var table []string
	for i, line := range strings.Split(res.stdout, "\n") {
		if i == 0 || strings.HasPrefix(line, apps+" ") || strings.HasPrefix(line, jobs+" ") {
			table = append(table, line)
		}
	}
	golden(t, filepath.Join("testdata", "get", "gitrepositories-all.golden"), m.mask(strings.Join(table, "\n")+"\n"))

	res = runCLI(t, "get", "bggr", "-n", apps, "--kubeconfig", env.Kubeconfig)
	require.Equal(t, 0, res.code, res.stderr)
	assert.True(t, strings.HasPrefix(res.stdout, "NAME "), "no NAMESPACE column without -A:\n%s", res.stdout)
	assert.Contains(t, res.stdout, "main@sha1:"+sha, "the table shows the full revision, as flux does")

	res = runCLI(t, "get", "gitrepositories", "app", "-n", apps, "--kubeconfig", env.Kubeconfig, "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var gr v1alpha1.GitRepository
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &gr))
	assert.Equal(t, v1alpha1.GitRepositoryKind, gr.Kind)
	assert.Equal(t, "main@sha1:"+sha, gr.Status.LastAppliedRevision)

	res = runCLI(t, "__complete", "get", "bggr", "-n", apps, "--kubeconfig", env.Kubeconfig, "")
	require.Equal(t, 0, res.code, res.stderr)
	assert.True(t, strings.HasPrefix(res.stdout, "app\n:"), "NAME completes from the cluster:\n%s", res.stdout)

	res = runCLI(t, "get", "gitrepository", "nope", "-n", apps, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code)
	assert.Equal(t, "error: gitrepository "+apps+"/nope not found\n", res.stderr)
	res = runCLI(t, "get", "fbgd", "nope", "-n", apps, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code)
	assert.Equal(t, "error: fbgd "+apps+"/nope not found\n", res.stderr)
	res = runCLI(t, "get", "fbgd", "nope", "-n", apps, "--kubeconfig", env.Kubeconfig, "--watch")
	assert.Equal(t, 2, res.code, "--watch of nothing fails at once")
	assert.Equal(t, "error: fbgd "+apps+"/nope not found\n", res.stderr)
	res = runCLI(t, "get", "fbgd", "-n", apps, "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 0, res.code)
	assert.Equal(t, "No resources found in "+apps+" namespace.\n", res.stderr)
	res = runCLI(t, "get", "fbgd", "x", "-A", "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code)
	res = runCLI(t, "get", "fbgd", "x", "-o", "wide", "--kubeconfig", env.Kubeconfig)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, `unknown output format "wide"`)
}
