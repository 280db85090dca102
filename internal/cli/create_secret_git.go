/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops create secret git`: a GitRepository's git credentials, checked the
// way the controller reads them.

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"bggitops.dev/bg-gitops/internal/source"
)

// gitSecretFlags are the credentials of `create secret git`.
type gitSecretFlags struct {
	username, password, bearerToken string
	sshKeyFile, knownHostsFile      string
	caFile                          string
}

func newGitSecretCommand(f *secretFlags) *cobra.Command {
	g := &gitSecretFlags{}
	cmd := &cobra.Command{
		Use:   "git NAME (--username U --password P | --bearer-token T | --ssh-key-file F --known-hosts-file K)",
		Short: "Create the Secret of a GitRepository's spec.secretRef (git credentials)",
		Long: `Create the Secret a GitRepository's spec.secretRef names: its git credentials.

  https:// or http:// URL   --username and --password (keys username, password: a forge
                            token as the password works with GitHub, GitLab and Gitea),
                            or --bearer-token (key bearerToken)
  ssh:// URL                --ssh-key-file (key identity, PEM or OpenSSH) and
                            --known-hosts-file (key known_hosts: host keys are checked
                            strictly, e.g. ssh-keyscan git.example.com > known_hosts);
                            --password is the key's passphrase, if it has one
  both                      --ca-file (key caFile): PEM CAs trusted besides the system's

The Secret is checked the way the controller reads it before it is created.`,
		Example: `  bg-gitops create secret git git-auth -n flink --username bot --password - < token.txt
  ssh-keyscan git.example.com > known_hosts
  bg-gitops create secret git git-auth -n flink --ssh-key-file id_ed25519 --known-hosts-file known_hosts
  bg-gitops create secret git git-auth -n flink --bearer-token - --export < token.txt | kubeseal -o yaml > git-auth.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := g.data(cmd.InOrStdin())
			if err != nil {
				return err
			}
			return emitSecret(cmd, f, args[0], data, "")
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&g.username, "username", "", "user name for http(s) basic authentication")
	fl.StringVar(&g.password, "password", "", "password or token for http(s) (with --username), or the passphrase of --ssh-key-file; - reads it from standard input")
	fl.StringVar(&g.bearerToken, "bearer-token", "", "token sent as Authorization: Bearer for http(s); - reads it from standard input")
	fl.StringVar(&g.sshKeyFile, "ssh-key-file", "", "private key file for ssh:// URLs")
	fl.StringVar(&g.knownHostsFile, "known-hosts-file", "", "known_hosts file with the git server's host keys (required with --ssh-key-file)")
	fl.StringVar(&g.caFile, "ca-file", "", "PEM file of CAs to trust for https, besides the system's")
	cmd.MarkFlagsMutuallyExclusive("bearer-token", "username")
	cmd.MarkFlagsMutuallyExclusive("bearer-token", "password")
	cmd.MarkFlagsMutuallyExclusive("bearer-token", "ssh-key-file")
	cmd.MarkFlagsMutuallyExclusive("username", "ssh-key-file")
	return cmd
}

// data builds the Secret's data and checks it with the controller's own
// reader, for a URL of the scheme the credentials are for.
func (g *gitSecretFlags) data(in io.Reader) (map[string][]byte, error) {
	pass, err := secretValue("password", g.password, in)
	if err != nil {
		return nil, err
	}
	token, err := secretValue("bearer-token", g.bearerToken, in)
	if err != nil {
		return nil, err
	}
	data, url, err := g.credentials(pass, token)
	if err != nil {
		return nil, err
	}
	if err := g.readFile(data, source.CAFileKey, g.caFile); err != nil {
		return nil, err
	}
	if _, err := source.AuthFromSecret(data, url); err != nil {
		return nil, fmt.Errorf("the controller would refuse this Secret: %w", err)
	}
	return data, nil
}

// credentials returns the keys of one way to authenticate and a URL of
// the scheme they serve.
func (g *gitSecretFlags) credentials(pass, token string) (map[string][]byte, string, error) {
	data := map[string][]byte{}
	switch {
	case g.sshKeyFile != "":
		if g.knownHostsFile == "" {
			return nil, "", errors.New("--ssh-key-file needs --known-hosts-file: the controller checks host keys strictly (ssh-keyscan HOST > known_hosts)")
		}
		if err := g.readFile(data, source.IdentityKey, g.sshKeyFile); err != nil {
			return nil, "", err
		}
		if err := g.readFile(data, source.KnownHostsKey, g.knownHostsFile); err != nil {
			return nil, "", err
		}
		putNonEmpty(data, source.PasswordKey, pass)
		return data, "ssh://git@git.example/repository.git", nil
	case g.knownHostsFile != "":
		return nil, "", errors.New("--known-hosts-file goes with --ssh-key-file")
	case token != "":
		data[source.BearerTokenKey] = []byte(token)
	case g.username != "" || pass != "":
		if g.username == "" || pass == "" {
			return nil, "", errors.New("give both --username and --password")
		}
		data[source.UsernameKey], data[source.PasswordKey] = []byte(g.username), []byte(pass)
	default:
		return nil, "", errors.New("give --username and --password, --bearer-token, or --ssh-key-file and --known-hosts-file")
	}
	return data, "https://git.example/repository.git", nil
}

func (g *gitSecretFlags) readFile(data map[string][]byte, key, path string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	data[key] = b
	return nil
}

func putNonEmpty(data map[string][]byte, key, v string) {
	if v != "" {
		data[key] = []byte(v)
	}
}
