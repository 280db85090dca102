/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The flags and client of every command that talks to the cluster: kubeconfig and
// namespace, name completion, and reading the object a command names.

package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/scheme"
)

// kubeFlags are the cluster flags of the commands that talk to a cluster:
// kubectl's own (--kubeconfig, --context, --as, -n, --server, ...), read
// the way kubectl reads them.
type kubeFlags struct {
	config *genericclioptions.ConfigFlags
	// allNamespaces is -A, on the commands that list.
	allNamespaces bool
}

func newKubeFlags() *kubeFlags {
	return &kubeFlags{config: genericclioptions.NewConfigFlags(true)}
}

// addFlags adds kubectl's cluster flags to fs.
func (k *kubeFlags) addFlags(fs *pflag.FlagSet) {
	k.config.AddFlags(fs)
}

// addAllNamespaces adds -A to a command that lists.
func (k *kubeFlags) addAllNamespaces(fs *pflag.FlagSet) {
	fs.BoolVarP(&k.allNamespaces, "all-namespaces", "A", false, "list the objects of every namespace")
}

// restConfig is the REST configuration the flags name.
func (k *kubeFlags) restConfig() (*rest.Config, error) {
	cfg, err := k.config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// connect returns a client and the namespace to act in: -n, else the
// context's namespace, else "default".
func (k *kubeFlags) connect() (client.Client, string, error) {
	cfg, err := k.restConfig()
	if err != nil {
		return nil, "", err
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, "", err
	}
	return c, k.namespace(), nil
}

// namespace is -n, else the context's namespace, else "default".
func (k *kubeFlags) namespace() string {
	ns, _, err := k.config.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

func newClient(cfg *rest.Config) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	return c, nil
}

// completeNames is a ValidArgsFunction that offers the names of objects of
// kind k in the namespace the flags name, for the first argument only.
func (k *kubeFlags) completeNames(kd *kind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, ns, err := k.connect()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		list := kd.newList()
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, n := range kd.names(list) {
			if strings.HasPrefix(n, toComplete) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// named is the object NAME a command acts on, in the namespace the flags
// name, with the client and context to reach it.
type named struct {
	ctx    context.Context
	client client.Client
	key    types.NamespacedName
}

// named connects and names NAME in the flags' namespace.
func (k *kubeFlags) named(cmd *cobra.Command, name string) (*named, error) {
	c, ns, err := k.connect()
	if err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return &named{ctx: ctx, client: c, key: types.NamespacedName{Namespace: ns, Name: name}}, nil
}

// read gets the object as kind kd; a missing object is "KIND ns/name not
// found".
func (n *named) read(kd *kind) (client.Object, error) {
	obj, err := readObject(n.ctx, n.client, kd, n.key)
	if err != nil {
		return nil, notFoundOr(kd, n.key, err)
	}
	return obj, nil
}

// readObject gets key into a new object of kind k.
func readObject(ctx context.Context, c client.Client, k *kind, key types.NamespacedName) (client.Object, error) {
	obj := k.newObject()
	if err := c.Get(ctx, key, obj); err != nil {
		return nil, fmt.Errorf("read %s %s: %w", k.short, key, err)
	}
	return obj, nil
}

// notFoundOr words a NotFound read; other errors pass.
func notFoundOr(k *kind, key types.NamespacedName, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s not found", k.short, key)
	}
	return err
}
