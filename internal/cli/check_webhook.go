/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The check of `bg-gitops check` on push webhooks: each GitRepository's receiver
// path and external URL.

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// webhooks: every GitRepository of -n with spec.webhook has its receiver
// path and, when the controller knows its external URL, that URL reaches
// the receiver from here (it answers a GET with 405, as it answers
// anything but a POST).
func (k *checker) webhooks(ctx context.Context) []checkLine {
	list := &v1alpha1.GitRepositoryList{}
	if err := k.c.List(ctx, list, client.InNamespace(k.ns)); err != nil {
		return []checkLine{cannotTell("webhooks of "+k.ns, fmt.Errorf("list gitrepositories: %w", err))}
	}
	var lines []checkLine
	for i := range list.Items {
		if gr := &list.Items[i]; gr.Spec.Webhook != nil {
			lines = append(lines, k.webhookLine(ctx, gr))
		}
	}
	return lines
}

func (k *checker) webhookLine(ctx context.Context, gr *v1alpha1.GitRepository) checkLine {
	name := gr.Namespace + "/" + gr.Name
	secret := gr.Spec.Webhook.SecretRef.Name
	switch {
	case gr.Status.WebhookPath == "":
		fix := fmt.Sprintf("bg-gitops create secret webhook %[1]s -n %[2]s, if it is missing; kubectl -n %[2]s describe gitrepository %[3]s",
			secret, gr.Namespace, gr.Name)
		return failing(fix, "GitRepository %s: no status.webhookPath yet (it is derived from the token of Secret %s)", name, secret)
	case gr.Status.WebhookURL == "":
		return passed("GitRepository %s: webhook path %s; give the forge the receiver's URL followed by it "+
			"(run the controller with --receiver-external-url to see the whole URL here)", name, gr.Status.WebhookPath)
	}
	if err := k.probe(ctx, gr.Status.WebhookURL); err != nil {
		return failing(fmt.Sprintf("expose Service %s (port http) at the controller's --receiver-external-url: an Ingress or a LoadBalancer", receiverService),
			"GitRepository %s: webhook URL %s: %v", name, gr.Status.WebhookURL, err)
	}
	return passed("GitRepository %s: webhook URL %s reaches the receiver: give it to the forge with the token of Secret %s", name, gr.Status.WebhookURL, secret)
}

// probe GETs a webhook URL and expects the receiver's answer to a GET.
func (k *checker) probe(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := k.http.Do(req)
	if err != nil {
		return fmt.Errorf("not reachable from here: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusMethodNotAllowed {
		return fmt.Errorf("answered %s, not the receiver's 405 to a GET", resp.Status)
	}
	return nil
}
