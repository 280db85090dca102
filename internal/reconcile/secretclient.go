/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// secretclient.go: secretClient, which reads Secrets from the API server
// uncached and records their values for scrubbing, and ClientOptions.

package reconcile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"bggitops.dev/bg-gitops/internal/redact"
)

// secretClient reads Secrets from the API server and records their
// values, so that the credentials in use are scrubbed whatever reads them.
// Read through the manager's cached client, one Secret would make it
// list and watch every Secret in the cluster and keep them in memory; the
// controller needs a few, now and then (see ClientOptions, which makes
// the manager's client read Secrets directly too).
type secretClient struct {
	client.Client
	// Live reads Secrets; Client when nil.
	Live client.Reader
	// Redact records the values of every Secret read.
	Redact *redact.Registry
}

func (c secretClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	sec, ok := obj.(*corev1.Secret)
	if !ok {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	var reader client.Reader = c.Client
	if c.Live != nil {
		reader = c.Live
	}
	if err := reader.Get(ctx, key, sec, opts...); err != nil {
		return err
	}
	if sec.Type == corev1.SecretTypeServiceAccountToken {
		// A tenant may create such a Secret for any account of its
		// namespace; used as a forge token or git credential, it would
		// send that account's token wherever the spec points.
		*sec = corev1.Secret{}
		return fmt.Errorf("Secret %s is a ServiceAccount token (type %s): it is never used as a credential", key.Name, corev1.SecretTypeServiceAccountToken)
	}
	c.Redact.NoteSecret(sec)
	return nil
}

// ClientOptions are the client options of a manager that runs the
// reconcilers: Secrets are never cached (no list or watch of Secrets; the
// controller's role grants only get).
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}

// secretReading is mgr's client reading Secrets as secretClient does,
// their values recorded in reg.
func secretReading(mgr manager.Manager, reg *redact.Registry) client.Client {
	return secretClient{Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Redact: reg}
}
