/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops create secret forge`: the token a GitRepository's commit statuses
// are posted with.

package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// forgeTokenKey is the key of spec.commitStatus.secretRef's Secret that
// the commit status reporter reads (internal/reconcile/commitstatus.go).
const forgeTokenKey = "token"

func newForgeSecretCommand(f *secretFlags) *cobra.Command {
	var token string
	cmd := &cobra.Command{
		Use:   "forge NAME --token T",
		Short: "Create the Secret of a GitRepository's spec.commitStatus.secretRef (forge token)",
		Long: `Create the Secret a GitRepository's spec.commitStatus.secretRef names: key token, the token
commit statuses are posted with. The scopes it needs:

  github   classic token: repo:status (statuses of public and private repositories);
           fine-grained token or GitHub App: "Commit statuses: read and write" on the
           repository
  gitlab   personal, group or project access token with scope api (role Developer or
           higher on the project)
  gitea    token with scope write:repository (Forgejo: the same)`,
		Example: `  bg-gitops create secret forge forge-token -n flink --token - < token.txt`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := secretValue("token", token, cmd.InOrStdin())
			if err != nil {
				return err
			}
			if v == "" {
				return errors.New("--token is required")
			}
			return emitSecret(cmd, f, args[0], map[string][]byte{forgeTokenKey: []byte(v)}, "")
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "the forge token; - reads it from standard input")
	return cmd
}
