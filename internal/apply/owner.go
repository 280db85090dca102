/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// owner.go: what an Apply may not write — objects owned elsewhere, objects
// outside a confined namespace, ServiceAccount token Secrets.

package apply

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// ErrOwnedElsewhere: the object exists in the cluster and was not created
// by this GitRepository, which may not take it over.
var ErrOwnedElsewhere = errors.New("not created by this GitRepository")

// ErrOutsideNamespace: a confined Apply may write only namespaced objects
// in its own namespace.
var ErrOutsideNamespace = errors.New("outside the GitRepository's namespace")

// ErrTokenSecret: a Secret that would make the API server mint a token for
// a ServiceAccount is never applied.
var ErrTokenSecret = errors.New("ServiceAccount token Secrets are not applied")

// confine refuses an object an Apply may not write: a ServiceAccount token
// Secret (the token of any account of the namespace, readable by whoever
// may read Secrets there), and, when confined, cluster-scoped kinds and
// objects of other namespaces.
func confine(it *item, o Options) error {
	if err := TokenSecret(it.obj); err != nil {
		return err
	}
	if !o.Confined {
		return nil
	}
	return Confine(it.obj, it.namespaced, o.Namespace)
}

// Confine refuses, for a GitRepository confined to namespace, a
// cluster-scoped object or one of another namespace.
func Confine(obj *unstructured.Unstructured, namespaced bool, namespace string) error {
	if !namespaced {
		return fmt.Errorf("%w: a GitRepository in namespace %s may apply only namespaced objects of its own namespace; "+
			"a cluster admin lists the namespaces allowed more with the controller's --cluster-wide-namespaces", ErrOutsideNamespace, namespace)
	}
	if ns := obj.GetNamespace(); ns != namespace {
		return fmt.Errorf("%w: namespace %s is not %s, the GitRepository's; "+
			"a cluster admin lists the namespaces allowed more with the controller's --cluster-wide-namespaces", ErrOutsideNamespace, ns, namespace)
	}
	return nil
}

// foreign returns an ObjectError for every plan that would change an
// existing object this GitRepository did not create: one stamped with
// another source is never taken over; one without a source (made by hand
// or by another tool) only when the object in Git says so
// (bggitops.dev/adopt: enabled) or it is in the inventory. An unchanged
// plan already carries this source: its stamps match.
func (r *run) foreign(plans []*plan) []error {
	if r.source == "" {
		return nil
	}
	var errs []error
	for _, p := range plans {
		if p.live == nil || p.action == ActionUnchanged {
			continue
		}
		if err := r.ownedElsewhere(p); err != nil {
			errs = append(errs, &ObjectError{ID: p.id, Err: err})
		}
	}
	return errs
}

func (r *run) ownedElsewhere(p *plan) error {
	return OwnedElsewhere(p.live, p.obj, r.source, r.owned[p.meta.String()])
}

// OwnedElsewhere is why an Apply by source may not change the existing
// object live into obj (ErrOwnedElsewhere), nil when it may; inInventory:
// source's inventory lists it. The PR plan judges by it too.
func OwnedElsewhere(live, obj *unstructured.Unstructured, source string, inInventory bool) error {
	owner := live.GetAnnotations()[v1alpha1.SourceAnnotation]
	switch {
	case owner == source, inInventory:
		return nil
	case owner != "":
		return fmt.Errorf("%w: it belongs to GitRepository %s (annotation %s); an object has one source: remove it from one of the repositories",
			ErrOwnedElsewhere, owner, v1alpha1.SourceAnnotation)
	case obj.GetAnnotations()[v1alpha1.AdoptAnnotation] == v1alpha1.AdoptEnabledValue:
		return nil
	}
	return fmt.Errorf("%w: it exists without a source (made by hand or by another tool); to take it over, annotate it in Git with %s: %s",
		ErrOwnedElsewhere, v1alpha1.AdoptAnnotation, v1alpha1.AdoptEnabledValue)
}

// inventoryIDs is the set of IDs of inv.
func inventoryIDs(inv *v1alpha1.Inventory) map[string]bool {
	out := map[string]bool{}
	if inv != nil {
		for _, e := range inv.Entries {
			out[e.ID] = true
		}
	}
	return out
}

// TokenSecret is ErrTokenSecret for obj when it is a ServiceAccount token
// Secret, which an Apply never writes; nil otherwise. The PR plan judges
// by it too.
func TokenSecret(obj *unstructured.Unstructured) error {
	if !isTokenSecret(obj) {
		return nil
	}
	return fmt.Errorf("%w: the API server would fill it with a token of ServiceAccount %q; "+
		"use a projected token volume or the TokenRequest API instead", ErrTokenSecret, obj.GetAnnotations()["kubernetes.io/service-account.name"])
}

func isTokenSecret(obj *unstructured.Unstructured) bool {
	if obj.GroupVersionKind().GroupKind() != (schema.GroupKind{Kind: "Secret"}) {
		return false
	}
	typ, _, _ := unstructured.NestedString(obj.Object, "type")
	_, named := obj.GetAnnotations()["kubernetes.io/service-account.name"]
	return typ == "kubernetes.io/service-account-token" || named
}
