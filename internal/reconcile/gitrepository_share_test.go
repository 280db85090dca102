/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/reconcile"
	"bggitops.dev/bg-gitops/internal/testing/gittest"
	"bggitops.dev/bg-gitops/internal/testing/reconciletest"
)

// monorepo is a repository of paths team-<name>/, each a kustomization of
// one ConfigMap named after it, served over HTTP with a password.
type monorepo struct {
	t    *testing.T
	repo *gittest.Repo
	srv  *gittest.HTTPServer
}

func newMonorepo(t *testing.T) *monorepo {
	gittest.Isolate(t)
	root := t.TempDir()
	m := &monorepo{t: t, repo: gittest.NewRepo(t, root, "mono")}
	m.srv = gittest.ServeHTTP(t, root, gittest.HTTPOptions{Username: "git", Password: "s3cr3t-pass"})
	return m
}

// push commits every team's path with value and returns the revision.
func (m *monorepo) push(value string, teams ...string) string {
	files := map[string]string{}
	for _, team := range teams {
		files["team-"+team+"/kustomization.yaml"] = fmt.Sprintf(kustomization, "cm.yaml")
		files["team-"+team+"/cm.yaml"] = fmt.Sprintf(configMap, "cm-"+team, value)
	}
	sha := m.repo.Commit(files, "change")
	m.repo.Push("main")
	return "main@sha1:" + sha
}

func gitSecret(t *testing.T, ns, name, password string) {
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		StringData: map[string]string{"username": "git", "password": password},
	}))
}

// createTeam creates the GitRepository of team's path, reading the
// repository with Secret secret ("" none).
func (m *monorepo) createTeam(ns, team, secret string) {
	gr := &v1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "team-" + team, Namespace: ns},
		Spec: v1alpha1.GitRepositorySpec{URL: m.srv.URL + "/mono.git", Path: "./team-" + team, TargetNamespace: ns,
			Interval: &metav1.Duration{Duration: time.Hour}},
	}
	if secret != "" {
		gr.Spec.SecretRef = &v1alpha1.LocalObjectReference{Name: secret}
	}
	require.NoError(m.t, env.Client.Create(context.Background(), gr))
}

func teamRepository(t *testing.T, ns, team string) *v1alpha1.GitRepository {
	gr := &v1alpha1.GitRepository{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "team-" + team}, gr))
	return gr
}

func waitTeamsApplied(t *testing.T, ns, rev string, teams ...string) {
	t.Helper()
	eventually(t, ns, "applied "+rev, func() bool {
		for _, team := range teams {
			gr := teamRepository(t, ns, team)
			if gr.Status.LastAppliedRevision != rev || !apimeta.IsStatusConditionTrue(gr.Status.Conditions, v1alpha1.ReadyCondition) {
				return false
			}
		}
		return true
	})
}

func sharedDirs(t *testing.T, cacheDir, ns string) []string {
	entries, err := os.ReadDir(filepath.Join(cacheDir, ns))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var shared []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "_shared-") {
			shared = append(shared, e.Name())
		}
	}
	return shared
}

// TestGitRepositoriesOfOneRepositoryShareOneFetch: three GitRepositories
// of one namespace read three paths of one repository with equal
// credentials (two Secrets of the same content): their creation lists the
// refs once and downloads once, one push with one reconcile request
// reaches all three with one more listing and download, and the shared
// checkout goes with the last of them.
func TestGitRepositoriesOfOneRepositoryShareOneFetch(t *testing.T) {
	ns := newNamespace(t)
	cacheDir := t.TempDir()
	mgr, err := reconciletest.Start(env.Config, reconciletest.Options{Namespace: ns,
		Controllers: &reconcile.Options{CacheDir: cacheDir, Concurrent: 2, AllowInsecureHTTP: true}})
	require.NoError(t, err)
	t.Cleanup(mgr.Stop)
	m := newMonorepo(t)
	teams := []string{"a", "b", "c"}
	rev1 := m.push("v1", teams...)
	gitSecret(t, ns, "auth-1", "s3cr3t-pass")
	gitSecret(t, ns, "auth-2", "s3cr3t-pass")
	m.createTeam(ns, "a", "auth-1")
	m.createTeam(ns, "b", "auth-2")
	m.createTeam(ns, "c", "auth-1")
	waitTeamsApplied(t, ns, rev1, teams...)
	for _, team := range teams {
		assert.True(t, configMapExists(ns, "cm-"+team), "team %s applied its own path", team)
	}
	assert.Equal(t, int64(1), m.srv.Listings(), "one ref listing for the three")
	assert.Equal(t, int64(1), m.srv.UploadPacks(), "one download for the three")
	assert.Len(t, sharedDirs(t, cacheDir, ns), 1, "one checkout for the three")

	rev2 := m.push("v2", teams...)
	requestTeamReconcile(t, ns, "b")
	waitTeamsApplied(t, ns, rev2, teams...)
	assert.Equal(t, int64(2), m.srv.Listings(), "the request lists once; the others follow it")
	assert.Equal(t, int64(2), m.srv.UploadPacks())

	for _, team := range teams {
		require.NoError(t, env.Client.Delete(context.Background(), teamRepository(t, ns, team)))
	}
	eventually(t, ns, "the shared checkout removed", func() bool { return len(sharedDirs(t, cacheDir, ns)) == 0 })
}

func requestTeamReconcile(t *testing.T, ns, team string) {
	gr := teamRepository(t, ns, team)
	patch := client.MergeFrom(gr.DeepCopy())
	if gr.Annotations == nil {
		gr.Annotations = map[string]string{}
	}
	gr.Annotations[v1alpha1.ReconcileRequestedAtAnnotation] = time.Now().Format(time.RFC3339Nano)
	require.NoError(t, env.Client.Patch(context.Background(), gr, patch))
}

// TestAFetchIsNeverSharedWithoutTheSameCredentials: a private repository
// fetched by one tenant is not read through the cache by an object that
// lacks its credentials: not in another namespace with none, nor in the
// same namespace with none or with a wrong password. Each asks the git
// server itself, which refuses it, and nothing of the repository is
// applied for it.
func TestAFetchIsNeverSharedWithoutTheSameCredentials(t *testing.T) {
	ns, other := newNamespace(t), newNamespace(t)
	startController(t, ns)
	startController(t, other)
	m := newMonorepo(t)
	rev := m.push("v1", "a", "b", "c", "d")
	gitSecret(t, ns, "auth", "s3cr3t-pass")
	m.createTeam(ns, "a", "auth")
	waitTeamsApplied(t, ns, rev, "a")

	gitSecret(t, ns, "wrong", "not-the-password")
	m.createTeam(ns, "b", "")
	m.createTeam(ns, "c", "wrong")
	m.createTeam(other, "d", "")
	for _, c := range []struct{ ns, team string }{{ns, "b"}, {ns, "c"}, {other, "d"}} {
		eventually(t, c.ns, "team "+c.team+" refused", func() bool {
			cond := apimeta.FindStatusCondition(teamRepository(t, c.ns, c.team).Status.Conditions, v1alpha1.FetchFailedCondition)
			return cond != nil && cond.Status == metav1.ConditionTrue
		})
		gr := teamRepository(t, c.ns, c.team)
		assert.Empty(t, gr.Status.LastAppliedRevision, "team %s applied nothing", c.team)
		assert.Nil(t, gr.Status.Artifact, "team %s learnt no revision", c.team)
		assert.False(t, configMapExists(c.ns, "cm-"+c.team))
	}
	assert.Equal(t, int64(1), m.srv.UploadPacks(), "only the tenant with the credentials downloaded")
}
