/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// applier.go: Applier and its Apply entry point, the Options and Result of one
// Apply, and the impersonating client per ServiceAccount (ClientFor).

package apply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Options of one Apply.
type Options struct {
	// ServiceAccountName, when set, makes every request (dry-run, apply,
	// prune) impersonate system:serviceaccount:<Namespace>:<ServiceAccountName>.
	ServiceAccountName string
	// Namespace of the GitRepository (for the ServiceAccount).
	Namespace string
	// Prune deletes objects of Inventory that are no longer in the set.
	Prune bool
	// Inventory is what was applied last time (nil on first apply).
	Inventory *v1alpha1.Inventory
	// Source is <namespace>/<name> of the GitRepository. Every object is
	// stamped with it (bggitops.dev/source); prune deletes only objects
	// whose annotation equals it, and an existing object stamped with
	// another source, or with none, is not taken over (see
	// v1alpha1.AdoptAnnotation).
	Source string
	// Confined limits the set to namespaced objects in Namespace: any other
	// object is rejected before anything is written.
	Confined bool
	// Check, when set, looks further than the dry-run: it is called with
	// the dry-run result of every object that the Apply would create or
	// change, after the dry-runs and before any write, with the client of
	// the Apply (so as the impersonated ServiceAccount). An error wrapping
	// a *RejectedError rejects the object like a failed dry-run: nothing is
	// applied. Any other error fails the Apply as a transient error.
	// Objects found unchanged are not checked: they are in the cluster as
	// they are, and an idle Apply stays without requests (see syncMemo).
	Check func(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error
}

// Change actions.
const (
	ActionCreated      = "created"
	ActionConfigured   = "configured"
	ActionUnchanged    = "unchanged"
	ActionPruned       = "pruned"
	ActionPruneSkipped = "skipped: prune disabled"
)

// Change is what happened to one object.
type Change struct {
	// ID is Kind/namespace/name (Kind/name for cluster-scoped objects).
	ID string
	// Action is one of the Action constants.
	Action string
}

// Result of one Apply.
type Result struct {
	// Inventory lists the applied objects, sorted by ID. After a failed
	// Apply it is the previous inventory plus whatever was written, so
	// storing it keeps those objects prunable.
	Inventory *v1alpha1.Inventory
	// Changes lists every object of the set (in apply order), then pruned
	// objects, or, without Prune, the objects left in the cluster
	// (ActionPruneSkipped).
	Changes []Change
}

// Applier applies object sets. It is safe for concurrent use.
type Applier struct {
	cfg    *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	admin  client.Client

	mu      sync.Mutex
	clients map[string]identity
	memo    *syncMemo
	watches *watches
}

// identity is a user's clients: the one that applies and the metadata
// client of its watches.
type identity struct {
	c  client.Client
	md metadata.Interface
}

// NewApplier returns an Applier that talks to the cluster of cfg, as cfg's
// user unless Options.ServiceAccountName is set. Impersonating clients are
// created once per ServiceAccount and cached.
func NewApplier(cfg *rest.Config, scheme *runtime.Scheme) (*Applier, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("http client: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("rest mapper: %w", err)
	}
	a := &Applier{cfg: cfg, scheme: scheme, mapper: mapper, clients: map[string]identity{}, memo: newSyncMemo(), watches: newWatches()}
	admin, err := a.newIdentity(cfg, hc)
	if err != nil {
		return nil, err
	}
	a.admin = admin.c
	a.clients[""] = admin
	return a, nil
}

func (a *Applier) newIdentity(cfg *rest.Config, hc *http.Client) (identity, error) {
	c, err := a.newClient(cfg, hc)
	if err != nil {
		return identity{}, err
	}
	md, err := metadata.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return identity{}, fmt.Errorf("metadata client: %w", err)
	}
	return identity{c: c, md: md}, nil
}

func (a *Applier) newClient(cfg *rest.Config, hc *http.Client) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: a.scheme, Mapper: a.mapper, HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return c, nil
}

// ClientFor returns a client that acts as ServiceAccount serviceAccount of
// namespace, or as the Applier's own user when serviceAccount is empty.
// Clients are created once per ServiceAccount; they read the API server
// directly (no cache).
func (a *Applier) ClientFor(namespace, serviceAccount string) (client.Client, error) {
	_, id, err := a.identityFor(Options{Namespace: namespace, ServiceAccountName: serviceAccount})
	return id.c, err
}

// identityFor returns the user that acts for o ("" for the Applier's
// own) and its clients.
func (a *Applier) identityFor(o Options) (string, identity, error) {
	if o.ServiceAccountName == "" {
		a.mu.Lock()
		defer a.mu.Unlock()
		return "", a.clients[""], nil
	}
	if o.Namespace == "" {
		return "", identity{}, fmt.Errorf("service account %s: namespace not set", o.ServiceAccountName)
	}
	user := "system:serviceaccount:" + o.Namespace + ":" + o.ServiceAccountName
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := a.clients[user]; ok {
		return user, id, nil
	}
	cfg := rest.CopyConfig(a.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", identity{}, fmt.Errorf("impersonate %s: %w", user, err)
	}
	id, err := a.newIdentity(cfg, hc)
	if err != nil {
		return "", identity{}, fmt.Errorf("impersonate %s: %w", user, err)
	}
	a.clients[user] = id
	return user, id, nil
}

// Apply dry-runs, applies and prunes objects as described in the package
// documentation. objs are not modified.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured, o Options) (Result, error) {
	res := Result{Inventory: mergeInventory(o.Inventory, nil)}
	if o.Prune && o.Source == "" {
		return res, fmt.Errorf("prune needs a source")
	}
	user, id, err := a.identityFor(o)
	if err != nil {
		return res, err
	}
	set, err := a.prepare(objs, o)
	if err != nil {
		return res, err
	}
	r := &run{c: id.c, memo: a.memo, user: user, look: a.lookFor(user, id.md), check: o.Check, source: o.Source, owned: inventoryIDs(o.Inventory), refused: map[string][]error{}}
	err = r.applyStaged(ctx, set)
	var partial *PartialError
	if err != nil && !errors.As(err, &partial) {
		res.Changes = r.changes
		res.Inventory = mergeInventory(o.Inventory, r.written)
		return res, err
	}
	res.Changes = r.changes
	res.Inventory = newInventory(keepItems(set, r.refused))
	if partial != nil {
		res.Inventory = mergeInventory(res.Inventory, within(o.Inventory, partial.Namespaces))
	}
	if !o.Prune {
		res.Changes = append(res.Changes, left(stale(o.Inventory, res.Inventory))...)
		return res, err
	}
	pruned, perr := r.prune(ctx, stale(o.Inventory, res.Inventory), o.Source)
	res.Changes = append(res.Changes, pruned...)
	if perr != nil {
		res.Inventory = mergeInventory(res.Inventory, r.unpruned)
	}
	return res, errors.Join(err, perr)
}
