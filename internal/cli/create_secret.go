/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops create` and `bg-gitops create secret`: the flags the secret commands
// share, and how a Secret is created or, with --export, printed.

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// secretFlags are the flags every `create secret` command shares.
type secretFlags struct {
	*kubeFlags
	export bool
}

func newCreateCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "create", Short: "Create what bg-gitops reads from the cluster", Args: cobra.NoArgs}
	cmd.AddCommand(newCreateSecretCommand())
	return cmd
}

func newCreateSecretCommand() *cobra.Command {
	f := &secretFlags{kubeFlags: newKubeFlags()}
	cmd := &cobra.Command{
		Use:   "secret git|forge|webhook NAME",
		Short: "Create a Secret with the keys the controller reads",
		Long: `Create a Secret with the keys the controller reads, in the namespace of the GitRepository that
names it (-n). With --export the Secret is printed as YAML instead, to seal (kubeseal) or
encrypt (SOPS) and commit. A value given as - is read from standard input, so it stays
out of the shell's history. On forge and webhook, --token is the Secret's value, not
kubectl's bearer token for the API server (authenticate with the kubeconfig).`,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	f.addFlags(pf)
	pf.BoolVar(&f.export, "export", false, "print the Secret as YAML instead of creating it")
	cmd.AddCommand(newGitSecretCommand(f), newForgeSecretCommand(f), newWebhookSecretCommand(f))
	return cmd
}

// emitSecret creates the Secret, or prints it with --export; next says
// what to do with it.
func emitSecret(cmd *cobra.Command, f *secretFlags, name string, data map[string][]byte, next string) error {
	sec := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace()},
		Type:       corev1.SecretTypeOpaque, Data: data,
	}
	out := cmd.OutOrStdout()
	if f.export {
		if !cmd.Flags().Changed("namespace") {
			// The YAML goes to a file or kubeseal; this goes to the user.
			fmt.Fprintf(cmd.ErrOrStderr(), "namespace %s (the kubeconfig's): a GitRepository reads only Secrets of its own namespace; -n chooses\n", sec.Namespace)
		}
		return exportSecret(out, sec)
	}
	c, _, err := f.connect()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if err := c.Create(ctx, sec); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("secret %s/%s already exists: delete it first, or apply the output of --export", sec.Namespace, name)
		}
		return fmt.Errorf("create secret %s/%s: %w", sec.Namespace, name, err)
	}
	fmt.Fprintf(out, "secret/%s created in namespace %s (keys: %s)\n", name, sec.Namespace, strings.Join(keysOf(data), ", "))
	if next != "" {
		fmt.Fprintln(out, next)
	}
	return nil
}

// exportSecret prints sec the way `kubectl create secret --dry-run=client
// -o yaml` does, without the empty fields.
func exportSecret(w io.Writer, sec *corev1.Secret) error {
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": sec.APIVersion, "kind": sec.Kind, "type": sec.Type, "data": sec.Data,
		"metadata": map[string]string{"name": sec.Name, "namespace": sec.Namespace},
	})
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

func keysOf(data map[string][]byte) []string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// secretValue is a flag's value, or the first line of in when it is "-";
// surrounding whitespace is dropped, as the controller drops it.
func secretValue(flag, v string, in io.Reader) (string, error) {
	if v != "-" {
		return strings.TrimSpace(v), nil
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("--%s -: read standard input: %w", flag, err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return "", fmt.Errorf("--%s -: standard input is empty", flag)
	}
	return line, nil
}
