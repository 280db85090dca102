/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// live.go: Compare, the head against the live objects by a server-side
// dry-run apply as the applying identity (`bg-gitops diff --cluster` and
// Plan), and placing the head in its GitRepository's target namespace.

package prplan

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/objects"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/review"
)

// Live is the head compared with the live objects.
type Live struct {
	// Report: base is the live objects, head what a server-side apply by
	// the controller's field manager would make of them (dry-run).
	Report *review.Report
	// Refused are the objects the dry-run refused; they are left out of
	// Report.
	Refused []Refusal
	// Unchecked are the objects the dry-run could not judge, with why:
	// one of a kind the head's own CRD adds (it shows as added), one this
	// identity may not read (left out of Report).
	Unchecked []Refusal
	// Source is the GitRepository that applies the head (the one given,
	// or the one the live objects name); nil when that cannot be told,
	// and Why says why: what it would prune is then not shown.
	Source *v1alpha1.GitRepository
	Why    string
}

// Compare compares every head object with the live one: the head side is
// what a server-side apply by the controller's field manager would make
// of the live object (dry-run through applier, nothing is written), so
// defaulted fields do not show and fields someone changed by hand (drift)
// do. Both sides go through objects.Normalize, the controller's own
// definition of drift, so an object shows exactly when the controller,
// applying the same commit, would re-apply it. Objects only in the cluster
// show as removed when the controller would prune them: they are in the
// inventory of gr, the GitRepository that applies the head (when nil, the
// one the live objects name; see ApplyingSource and Prunable). head must be
// placed (PlaceHead).
func Compare(ctx context.Context, applier client.Client, reader client.Reader, head []*unstructured.Unstructured, gr *v1alpha1.GitRepository) (*Live, error) {
	return compare(ctx, applier, reader, head, gr, Rules{})
}

// Rules are the apply's own rules beyond the dry-run (apply.Options): a
// confined GitRepository writes only namespaced objects of its own
// namespace, and Check looks further than the dry-run (the accounts a job
// may run as, the Ingress policy). The controller sets them for its plans,
// so a plan refuses what its apply would refuse.
type Rules struct {
	Confined bool
	Check    func(context.Context, client.Client, *unstructured.Unstructured) error
}

func compare(ctx context.Context, applier client.Client, reader client.Reader, head []*unstructured.Unstructured, gr *v1alpha1.GitRepository, rules Rules) (*Live, error) {
	out := &Live{Source: gr}
	hc := newHeadCtx(head, gr)
	hc.rules = rules
	if gr != nil {
		hc.namespace = gr.Namespace
	}
	var live, dry, raw []*unstructured.Unstructured
	for _, obj := range head {
		l, d, v, err := hc.dryRunApply(ctx, applier, reader, obj)
		switch {
		case err != nil:
			return nil, err
		case v.refused != nil:
			out.Refused = append(out.Refused, *v.refused)
			continue
		case v.unchecked != nil:
			out.Unchecked = append(out.Unchecked, *v.unchecked)
			if d == nil {
				continue
			}
		}
		if l != nil {
			raw = append(raw, l.DeepCopy())
			live = append(live, objects.Normalize(l))
		}
		dry = append(dry, objects.Normalize(d))
	}
	gone, err := out.prunable(ctx, reader, head, raw)
	if err != nil {
		return nil, err
	}
	if out.Report, err = review.Compare(append(live, gone...), dry); err != nil {
		return nil, err
	}
	out.Report.Base = review.Revision{Ref: "cluster"}
	return out, nil
}

// prunable finds the applying source when none was given and reads what
// it would prune.
func (l *Live) prunable(ctx context.Context, reader client.Reader, head, raw []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if l.Source == nil {
		gr, why, err := ApplyingSource(ctx, reader, "", raw)
		if err != nil {
			return nil, err
		}
		l.Source, l.Why = gr, why
	}
	if l.Source == nil {
		return nil, nil
	}
	return Prunable(ctx, reader, l.Source, head)
}

// PlaceHead puts the namespaced objects of head in the target namespace of
// gr, the GitRepository that applies them, as the controller does
// (render.Namespace); without gr, one with no namespace cannot be compared.
func PlaceHead(mapper client.Client, head []*unstructured.Unstructured, gr *v1alpha1.GitRepository) error {
	scoped := Scopes(mapper)
	why := "the GitRepository that applies --path gives it its spec.targetNamespace; name that GitRepository with --source NAMESPACE/NAME"
	if gr != nil {
		if err := render.Namespace(head, gr.Spec.TargetNamespace, scoped); err != nil {
			return err
		}
		why = "the controller refuses to apply it (set spec.targetNamespace of gitrepository " + gr.Namespace + "/" + gr.Name + " or metadata.namespace)"
	}
	for _, obj := range head {
		if cluster, known := scoped(obj.GroupVersionKind()); obj.GetNamespace() == "" && known && !cluster {
			return fmt.Errorf("%s has no namespace: %s", objects.ID(obj), why)
		}
	}
	return nil
}

// Scopes tells cluster-scoped kinds from c's RESTMapper (known false when
// the mapper does not know the kind), as render.Namespace asks.
func Scopes(c client.Client) func(schema.GroupVersionKind) (cluster, known bool) {
	return func(gvk schema.GroupVersionKind) (bool, bool) {
		namespaced, err := objects.Namespaced(c.RESTMapper(), gvk)
		return !namespaced, err == nil
	}
}

// headCtx is what the head itself brings that its objects' dry-run
// depends on: the namespaces it creates, the kinds its CRDs add.
// With the source that applies it and the inventory of its GitRepository,
// it judges what the controller's apply refuses whatever the API server
// says (apply.OwnedElsewhere, apply.TokenSecret).
type headCtx struct {
	namespaces map[string]bool
	kinds      map[schema.GroupKind]bool
	source     string // gr's bggitops.dev/source value, "" without gr
	inventory  map[string]bool
	rules      Rules
	namespace  string // the GitRepository's
}

func newHeadCtx(head []*unstructured.Unstructured, gr *v1alpha1.GitRepository) headCtx {
	hc := headCtx{namespaces: map[string]bool{}, kinds: map[schema.GroupKind]bool{}, inventory: map[string]bool{}}
	if gr != nil {
		hc.source = gr.SourceValue()
		if gr.Status.Inventory != nil {
			for _, e := range gr.Status.Inventory.Entries {
				hc.inventory[e.ID] = true
			}
		}
	}
	for _, u := range head {
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Group == "" && gvk.Kind == "Namespace":
			hc.namespaces[u.GetName()] = true
		case gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition":
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			hc.kinds[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	return hc
}

// sourceOf is the source that applies obj: the GitRepository's, else the
// one the head stamped on it.
func (hc headCtx) sourceOf(obj *unstructured.Unstructured) string {
	if hc.source != "" {
		return hc.source
	}
	return obj.GetAnnotations()[v1alpha1.SourceAnnotation]
}

// verdict of a dry-run that did not take an object: refused, or not
// checked (with why).
type verdict struct{ refused, unchecked *Refusal }

// dryRunApply returns the live object (nil when absent) and the dry-run
// result of applying obj, or the refusal of the API server. An object
// whose namespace the head creates is new: the rendered object stands for
// the dry-run result; one whose namespace neither exists nor comes with
// the head is refused, as the controller's dry-run refuses it. An object
// of a kind the head's own CRD adds is added, not checked; one this
// identity may not read is not checked.
func (hc headCtx) dryRunApply(ctx context.Context, applier client.Client, reader client.Reader, obj *unstructured.Unstructured) (live, dry *unstructured.Unstructured, v verdict, err error) {
	if err := hc.confine(obj); err != nil {
		return nil, nil, verdict{refused: &Refusal{Object: idOf(obj), Reason: err.Error()}}, nil
	}
	newKind := hc.kinds[obj.GroupVersionKind().GroupKind()]
	live = &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			live = nil
		case newKind && apimeta.IsNoMatchError(err):
			return nil, obj.DeepCopy(), verdict{unchecked: &Refusal{Object: idOf(obj), Reason: "added, not checked (its CRD comes with this change)"}}, nil
		case apimeta.IsNoMatchError(err):
			return nil, nil, verdict{refused: &Refusal{Object: idOf(obj), Reason: "the cluster serves no kind " + obj.GroupVersionKind().String()}}, nil
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			return nil, nil, verdict{unchecked: &Refusal{Object: idOf(obj), Reason: "not checked: " + scrubSecret(obj, err)}}, nil
		default:
			return nil, nil, verdict{}, fmt.Errorf("read %s: %w", objects.ID(obj), err)
		}
	}
	if source := hc.sourceOf(obj); live != nil && source != "" {
		if err := apply.OwnedElsewhere(live, obj, source, hc.inventory[objects.Key(obj).String()]); err != nil {
			return nil, nil, verdict{refused: &Refusal{Object: idOf(obj), Reason: err.Error()}}, nil
		}
	}
	dry = obj.DeepCopy()
	err = objects.Apply(ctx, applier, dry, client.DryRunAll)
	switch {
	case err == nil:
		v, err := hc.check(ctx, applier, obj, dry)
		return live, dry, v, err
	case newKind && (apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err)):
		return nil, obj.DeepCopy(), verdict{unchecked: &Refusal{Object: idOf(obj), Reason: "added, not checked (its CRD comes with this change)"}}, nil
	case live == nil && apierrors.IsNotFound(err) && hc.namespaces[obj.GetNamespace()]:
		return nil, obj.DeepCopy(), verdict{}, nil
	case live == nil && apierrors.IsNotFound(err) && obj.GetNamespace() != "":
		return nil, nil, verdict{refused: &Refusal{Object: idOf(obj), Reason: "namespace " + obj.GetNamespace() + " does not exist"}}, nil
	case refusal(err):
		return nil, nil, verdict{refused: &Refusal{Object: idOf(obj), Reason: scrubSecret(obj, err)}}, nil
	}
	return nil, nil, verdict{}, fmt.Errorf("dry-run apply %s: %w", objects.ID(obj), errors.New(scrubSecret(obj, err)))
}

// refusal reports an error the API server gives for good: the identity
// may not (403, an admission webhook's denial too), the object is invalid
// (422) or malformed (400), or its kind is unknown.
func refusal(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err)
}

// idOf is Kind namespace/name, as review names objects.
func idOf(u *unstructured.Unstructured) string {
	return review.Object{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}.ID()
}

// confine refuses what the apply never writes: a ServiceAccount token
// Secret, and for a confined GitRepository anything outside its namespace.
func (hc headCtx) confine(obj *unstructured.Unstructured) error {
	if err := apply.TokenSecret(obj); err != nil {
		return err
	}
	if !hc.rules.Confined {
		return nil
	}
	return apply.Confine(obj, obj.GetNamespace() != "", hc.namespace)
}

// check runs the apply's own check on the dry-run result, as the apply
// does before it writes: a rejection refuses the object, any other error
// (the check could not ask) fails the plan, to be tried again.
func (hc headCtx) check(ctx context.Context, applier client.Client, obj, dry *unstructured.Unstructured) (verdict, error) {
	if hc.rules.Check == nil {
		return verdict{}, nil
	}
	err := hc.rules.Check(ctx, applier, dry.DeepCopy())
	var rej *apply.RejectedError
	switch {
	case err == nil:
		return verdict{}, nil
	case errors.As(err, &rej):
		return verdict{refused: &Refusal{Object: idOf(obj), Reason: scrubSecret(obj, err)}}, nil
	default:
		return verdict{}, fmt.Errorf("check %s: %s", objects.ID(obj), scrubSecret(obj, err))
	}
}
