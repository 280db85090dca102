/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package cli

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/scheme"
)

// kubeFlags are the cluster flags of the commands that talk to a cluster.
type kubeFlags struct {
	kubeconfig string
	namespace  string
}

// clientConfig loads --kubeconfig, else $KUBECONFIG or ~/.kube/config, else
// the in-cluster configuration, the way kubectl does.
func clientConfig(kubeconfig string) clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
}

// connect returns a client and the namespace to act in: -n, else the
// context's namespace, else "default".
func (k *kubeFlags) connect() (client.Client, string, error) {
	cc := clientConfig(k.kubeconfig)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, "", err
	}
	ns := k.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	return c, ns, nil
}

func newClient(cfg *rest.Config) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	return c, nil
}
