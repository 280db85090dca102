/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// stage.go: run, the state of one Apply, and the staged order — dry-run,
// check, stage 1 (CRDs, Namespaces, ClusterRoles), wait, stage 2.

package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/objects"
)

// establishTimeout bounds the wait for a new CRD to be served.
const establishTimeout = time.Minute

// run is the state of one Apply.
type run struct {
	c    client.Client
	memo *syncMemo
	// user is the identity of c ("" for the Applier's own); look finds an
	// object in its watch as that identity (see watchedUntouched).
	user  string
	look  func(*item) (*metav1.PartialObjectMetadata, bool)
	check func(context.Context, client.Client, *unstructured.Unstructured) error
	// source is this Apply's source annotation; owned the IDs of its
	// inventory. Existing objects of neither are not taken over.
	source string
	owned  map[string]bool
	// groupOf maps the ID of each object of the set to its namespace ("" for
	// cluster-scoped objects); refused holds the object errors of each
	// namespace that is not applied.
	groupOf  map[string]string
	refused  map[string][]error
	changes  []Change
	written  []v1alpha1.ObjectRef
	unpruned []v1alpha1.ObjectRef
}

// applyStaged dry-runs, then applies the definitions (stage 1) and the rest
// (stage 2). See the package documentation for the order. Objects refused
// in a namespace (owned elsewhere, rejected by the dry-run or the check)
// keep every object of that namespace out; the rest is applied and a
// *PartialError names them. A refused cluster-scoped object keeps the
// whole set out: the namespaces of the set may depend on it.
func (r *run) applyStaged(ctx context.Context, set []*item) error {
	r.groupOf = groupsOf(set)
	defs, rest := splitStages(set)
	p1, errs := r.dryRunAll(ctx, defs)
	now, later := deferred(rest, p1)
	p2, errs2 := r.dryRunAll(ctx, now)
	if err := r.verdict(ctx, append(errs, errs2...), p1, p2); err != nil {
		return fmt.Errorf("dry-run, nothing applied: %w", err)
	}
	if err := r.write(ctx, p1); err != nil {
		return err
	}
	if err := r.waitEstablished(ctx, p1); err != nil {
		return err
	}
	p3, errs3 := r.dryRunAll(ctx, keepItems(later, r.refused))
	if err := r.verdict(ctx, errs3, p3); err != nil {
		return fmt.Errorf("dry-run after namespaces and CRDs were applied, nothing else applied: %w", err)
	}
	if err := r.write(ctx, sortPlans(keepPlans(append(p2, p3...), r.refused))); err != nil {
		return err
	}
	return r.partialError()
}

// verdict runs the check on the accepted plans and sorts the object errors
// of the dry-run and of the check by namespace into r.refused. It returns
// them all when one is of a cluster-scoped object, or else a transient
// check error.
func (r *run) verdict(ctx context.Context, errs []error, plans ...[]*plan) error {
	var all []*plan
	for _, ps := range plans {
		all = append(all, ps...)
	}
	errs = append(errs, r.foreign(all)...)
	rejected, transient := r.runCheck(ctx, all)
	errs = append(errs, rejected...)
	if r.refuseAll(errs) {
		return joinObjectErrors(errs)
	}
	if transient != nil {
		return transient
	}
	for _, err := range errs {
		ns := r.groupOf[objectID(err)]
		r.refused[ns] = append(r.refused[ns], err)
	}
	return nil
}

// refuseAll reports whether one of errs is of a cluster-scoped object (or
// of no object of the set).
func (r *run) refuseAll(errs []error) bool {
	for _, err := range errs {
		if r.groupOf[objectID(err)] == "" {
			return true
		}
	}
	return false
}

// partialError names the refused namespaces and why, nil when none was.
// When every object of the set was refused, nothing was applied: that is
// the whole apply's failure, not a partial one.
func (r *run) partialError() error {
	if len(r.refused) == 0 {
		return nil
	}
	var errs []error
	for _, ns := range refusedNamespaces(r.refused) {
		errs = append(errs, r.refused[ns]...)
	}
	if !r.appliedElsewhere() {
		return fmt.Errorf("dry-run, nothing applied: %w", joinObjectErrors(errs))
	}
	return &PartialError{Namespaces: refusedNamespaces(r.refused), Err: joinObjectErrors(errs)}
}

// appliedElsewhere reports whether the set has objects outside the
// refused namespaces.
func (r *run) appliedElsewhere() bool {
	for _, ns := range r.groupOf {
		if _, refused := r.refused[ns]; !refused {
			return true
		}
	}
	return false
}

// runCheck calls the check for every plan that creates or changes an
// object. Rejections become ObjectErrors; other errors are joined.
func (r *run) runCheck(ctx context.Context, plans []*plan) (rejected []error, transient error) {
	if r.check == nil {
		return nil, nil
	}
	errs := make([]error, len(plans))
	parallel(len(plans), func(i int) {
		if plans[i].action != ActionUnchanged {
			errs[i] = r.check(ctx, r.c, plans[i].dry.DeepCopy())
		}
	})
	var others []error
	for i, err := range errs {
		var rej *RejectedError
		switch {
		case err == nil:
		case errors.As(err, &rej):
			rejected = append(rejected, &ObjectError{ID: plans[i].id, Err: err})
		default:
			others = append(others, fmt.Errorf("check %s: %w", plans[i].id, err))
		}
	}
	return rejected, errors.Join(others...)
}

// splitStages puts CRDs, Namespaces and ClusterRoles (ssa's cluster
// definitions) first; set is already in apply order.
func splitStages(set []*item) (defs, rest []*item) {
	for _, it := range set {
		if utils.IsClusterDefinition(it.obj) {
			defs = append(defs, it)
		} else {
			rest = append(rest, it)
		}
	}
	return defs, rest
}

// deferred splits rest into objects that can be dry-run now and those in a
// Namespace, or of a CRD kind, that stage 1 creates or changes: the API
// server cannot dry-run them before stage 1 is written.
func deferred(rest []*item, defs []*plan) (now, later []*item) {
	namespaces := map[string]bool{}
	kinds := map[schema.GroupKind]bool{}
	for _, p := range defs {
		switch {
		case utils.IsNamespace(p.obj) && p.action == ActionCreated:
			namespaces[p.obj.GetName()] = true
		case utils.IsCRD(p.obj) && (p.action != ActionUnchanged || !established(p.live)):
			kinds[objects.CRDKind(p.obj)] = true
		}
	}
	for _, it := range rest {
		if namespaces[it.obj.GetNamespace()] || kinds[it.obj.GroupVersionKind().GroupKind()] {
			later = append(later, it)
		} else {
			now = append(now, it)
		}
	}
	return now, later
}

func sortPlans(plans []*plan) []*plan {
	sort.SliceStable(plans, func(i, j int) bool {
		return objects.Less(plans[i].meta, plans[j].meta)
	})
	return plans
}

// write applies the plans that change something, in order, and records
// every plan as a change. It stops at the first rejected object.
func (r *run) write(ctx context.Context, plans []*plan) error {
	for _, p := range plans {
		if p.action != ActionUnchanged {
			obj := p.obj.DeepCopy()
			if err := objects.Apply(ctx, r.c, obj); err != nil {
				return fmt.Errorf("apply: %w", &ObjectError{ID: p.id, Err: apiError(p.obj, err)})
			}
			r.written = append(r.written, ref(p.obj))
			r.memo.record(r.user, p.item, obj)
		}
		r.changes = append(r.changes, Change{ID: p.id, Action: p.action})
	}
	return nil
}

// waitEstablished waits until the CRDs that stage 1 wrote are served.
func (r *run) waitEstablished(ctx context.Context, plans []*plan) error {
	for _, p := range plans {
		if !utils.IsCRD(p.obj) || (p.action == ActionUnchanged && established(p.live)) {
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, establishTimeout, true,
			func(ctx context.Context) (bool, error) {
				crd := &unstructured.Unstructured{}
				crd.SetGroupVersionKind(p.obj.GroupVersionKind())
				if err := r.c.Get(ctx, client.ObjectKeyFromObject(p.obj), crd); err != nil {
					return false, nil
				}
				return established(crd), nil
			})
		if err != nil {
			return fmt.Errorf("wait for %s to be established: %w", p.id, err)
		}
	}
	return nil
}

func established(crd *unstructured.Unstructured) bool {
	if crd == nil {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
