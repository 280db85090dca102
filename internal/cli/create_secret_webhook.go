/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops create secret webhook`: the token a forge signs push webhooks with,
// random unless given.

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"bggitops.dev/bg-gitops/internal/source"
)

func newWebhookSecretCommand(f *secretFlags) *cobra.Command {
	var token string
	cmd := &cobra.Command{
		Use:   "webhook NAME [--token T]",
		Short: "Create the Secret of a GitRepository's spec.webhook.secretRef (push webhook token)",
		Long: `Create the Secret a GitRepository's spec.webhook.secretRef names: key token, the secret the
forge signs push webhooks with (a random one unless --token is given). The receiver path in
the GitRepository's status.webhookPath is derived from it, and status.webhookURL is the URL
to give the forge when the controller runs with --receiver-external-url.

In the forge: GitHub: Payload URL = status.webhookURL, Content type application/json,
Secret = the token, "Just the push event". Gitea/Forgejo: POST, application/json,
Secret = the token, push events. GitLab: URL = status.webhookURL, Secret token = the
token, Push events (and Tag push events for a GitRepository that follows tags).`,
		Example: `  bg-gitops create secret webhook webhook -n flink
  kubectl -n flink get secret webhook -o jsonpath='{.data.token}' | base64 -d   # paste into the forge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := webhookToken(token, cmd)
			if err != nil {
				return err
			}
			if token == "" && f.export {
				// Sealed or encrypted, the YAML no longer shows it.
				fmt.Fprintf(cmd.ErrOrStderr(), "generated token (give it to the forge): %s\n", v)
			}
			next := fmt.Sprintf("Give the forge the token (kubectl -n %s get secret %s -o jsonpath='{.data.token}' | base64 -d) and,\n"+
				"as URL, status.webhookURL of the GitRepository naming this Secret (bg-gitops check -n %s prints it).", f.namespace(), args[0], f.namespace())
			return emitSecret(cmd, f, args[0], map[string][]byte{source.WebhookTokenKey: []byte(v)}, next)
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "the webhook token; random (32 bytes, hex) when not given; - reads it from standard input")
	return cmd
}

func webhookToken(flag string, cmd *cobra.Command) (string, error) {
	if cmd.Flags().Changed("token") {
		v, err := secretValue("token", flag, cmd.InOrStdin())
		if err == nil && v == "" {
			err = errors.New("--token is empty")
		}
		return v, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
