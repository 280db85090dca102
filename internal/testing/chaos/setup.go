/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// setup.go: seedRepos and createSources: the run's Gitea repositories, and
// per repository its namespace, Secrets, GitRepository and push webhook.

package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// gitInterval is the GitRepositories' polling, the fallback of a webhook
// lost while the receivers or Gitea were down.
const gitInterval = 30 * time.Second

// seedRepos creates the Gitea repositories (the seed commits come with
// the schedule).
func (e *env) seedRepos(ctx context.Context) error {
	e.git = &pusher{forge: e.forge, dir: filepath.Join(e.dir, "work"), env: e.childEnv()}
	for _, r := range repos {
		if _, err := e.forge.CreateRepo(ctx, r.Name); err != nil {
			return err
		}
	}
	return nil
}

// cloneURL is where the controllers fetch r: through the link to Gitea,
// or to the git server.
func (e *env) cloneURL(r repoDef) string {
	if r.ViaGitServer {
		return e.gitLink.URL() + "/" + e.forge.AdminUser + "/" + r.Name + ".git"
	}
	return e.giteaLink.URL() + "/" + e.forge.AdminUser + "/" + r.Name + ".git"
}

// createSources creates, per repository, the namespace, the Secrets and
// the GitRepository, and the Gitea push webhook to the path the controller
// publishes.
func (e *env) createSources(ctx context.Context) error {
	for _, r := range repos {
		if err := e.createSource(ctx, r); err != nil {
			return fmt.Errorf("repository %s: %w", r.Name, err)
		}
	}
	return nil
}

func (e *env) createSource(ctx context.Context, r repoDef) error {
	secret := randomHex(16)
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: r.Namespace},
			StringData: map[string]string{"token": e.forge.Token}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "webhook-token", Namespace: r.Namespace},
			StringData: map[string]string{"token": secret}},
		&v1alpha1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace},
			Spec: v1alpha1.GitRepositorySpec{
				URL: e.cloneURL(r), Ref: &v1alpha1.GitRepositoryRef{Branch: "main"},
				Interval: &metav1.Duration{Duration: gitInterval},
				CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: e.giteaLink.URL(),
					Repository: e.forge.Repository(r.Name), SecretRef: v1alpha1.LocalObjectReference{Name: "forge-token"}},
				Webhook: &v1alpha1.WebhookSpec{SecretRef: v1alpha1.LocalObjectReference{Name: "webhook-token"}},
			},
		},
	}
	for _, o := range objs {
		if err := e.c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	path, err := e.webhookPath(ctx, r)
	if err != nil {
		return err
	}
	return e.forge.CreatePushWebhook(ctx, r.Name, e.receiverLink.URL()+path, secret)
}

func (e *env) webhookPath(ctx context.Context, r repoDef) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		gr := &v1alpha1.GitRepository{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, gr); err == nil && gr.Status.WebhookPath != "" {
			return gr.Status.WebhookPath, nil
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return "", ctx.Err()
		}
	}
	return "", fmt.Errorf("no status.webhookPath on GitRepository %s/%s", r.Namespace, r.Name)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
