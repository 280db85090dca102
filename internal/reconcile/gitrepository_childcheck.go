/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// gitrepository_childcheck.go: the apply check of a FlinkBlueGreenDeployment,
// a dry-run create of the child FlinkDeployment it would make (checkChild,
// CheckChild).

package reconcile

import (
	"context"
	"errors"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/objects"
)

// checkChild is the apply check of a FlinkBlueGreenDeployment: its
// template is schemaless, so the API server accepts a parent whose child
// FlinkDeployment the Flink CRD or the Flink operator's admission webhook
// would refuse, and the rollout would fail long after the sync succeeded.
// It dry-run creates the child the blue/green controller would create, as
// the identity of the apply, and rejects the parent when the cluster
// refuses that child. Other kinds pass.
func checkChild(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	return Tenancy{}.checkChild(ctx, c, obj)
}

// checkChild is checkChild that also rejects a parent whose jobs would run
// as an account outside t.FlinkAccounts.
func (t Tenancy) checkChild(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	_, err := t.askChild(ctx, c, obj)
	return err
}

// askChild is checkChild that also says, when the parent passes because
// the cluster could not be asked, why (unasked).
func (t Tenancy) askChild(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (unasked string, err error) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != v1alpha1.GroupVersion.Group || gvk.Kind != v1alpha1.FlinkBlueGreenDeploymentKind {
		return "", nil
	}
	child, err := preflightChild(obj)
	if err != nil {
		return "", apply.Rejected("its FlinkDeployment child cannot be built", obj, err)
	}
	spec, _ := child.Object["spec"].(map[string]any)
	if err := t.flinkAccounts(spec); err != nil {
		return "", apply.Rejected("its jobs may not run as that account", obj, err)
	}
	p, err := parentOf(obj)
	if err != nil {
		return "", err
	}
	if err := ingressVerdict(obj, t.parentIngresses(p)); err != nil {
		return "", err
	}
	err = c.Create(ctx, child, client.DryRunAll, client.FieldOwner(objects.FieldManager))
	unasked, err = childVerdict(ctx, c, child, err)
	if unasked != "" || err != nil {
		// (A namespace created by the same apply has no opt-in yet:
		// the check before a child is written asks.)
		return unasked, err
	}
	return "", ingressVerdict(obj, mayWriteIngresses(ctx, c, p.Spec.Template.Spec.Ingress, p.Namespace))
}

func parentOf(obj *unstructured.Unstructured) (*v1alpha1.FlinkBlueGreenDeployment, error) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := fromMap(obj.Object, p); err != nil {
		return nil, apply.Rejected("its FlinkDeployment child cannot be built", obj, err)
	}
	return p, nil
}

// ingressVerdict rejects obj for a refusal of the platform's Ingress
// rules; a failed access review stays transient.
func ingressVerdict(obj *unstructured.Unstructured, err error) error {
	if ingressPolicyRefusal(err) || errors.Is(err, errInvalidIngress) {
		return apply.Rejected(ingressReason(err)+": its FlinkDeployments' Ingress is not one the platform allows", obj, err)
	}
	return err
}

// CheckChild is checkChild for `bg-gitops diff --cluster`, which must not
// present a child it could not ask about as taken: nil and no unasked
// when the cluster would take the FlinkDeployment child of obj (or obj is
// no FlinkBlueGreenDeployment); unasked, why the cluster could not be
// asked; an apply.RejectedError when it would refuse the child; another
// error when asking failed.
func CheckChild(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (unasked string, err error) {
	return Tenancy{}.askChild(ctx, c, obj)
}

// preflightChild is the blue colour's FlinkDeployment as childObject builds
// it, with a generated name so that it never meets an existing child, and
// no owner, since the parent may not exist yet.
func preflightChild(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := fromMap(obj.Object, p); err != nil {
		return nil, err
	}
	cs := &bluegreen.ChildSpec{Name: bluegreen.ChildName(p.Name, bluegreen.Blue), Color: bluegreen.Blue,
		Spec: *p.Spec.Template.Spec.DeepCopy(), Revision: p.Annotations[v1alpha1.RevisionAnnotation]}
	child, err := childObject(p, cs)
	if err != nil {
		return nil, err
	}
	child.SetName("")
	child.SetGenerateName(p.Name + "-preflight-")
	child.SetOwnerReferences(nil)
	return child, nil
}

// childVerdict classifies the dry-run's outcome. Without the Flink CRDs, or
// before the namespace exists, there is nothing to ask; a refusal of the
// object (invalid, bad request, or denied by admission) rejects the parent;
// anything else is transient. unasked says why nothing could be asked.
func childVerdict(ctx context.Context, c client.Client, child *unstructured.Unstructured, err error) (unasked string, _ error) {
	switch {
	case err == nil:
		return "", nil
	case apierrors.IsNotFound(err):
		return "namespace " + child.GetNamespace() + " does not exist yet", nil
	}
	if why, noCRD := missingFlinkCRD(err); noCRD {
		return why, nil
	}
	const rejected = "its FlinkDeployment child would be rejected"
	switch {
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return "", apply.Rejected(rejected, child, err)
	case apierrors.IsForbidden(err):
		return forbiddenVerdict(ctx, c, child, err, rejected)
	}
	return "", fmt.Errorf("dry-run its FlinkDeployment child: %w", err)
}

// forbiddenVerdict tells an admission denial from missing RBAC: an identity
// that may apply FlinkBlueGreenDeployments need not be allowed to create
// FlinkDeployments (the blue/green controller creates them), so then the
// check cannot be made and the parent passes.
func forbiddenVerdict(ctx context.Context, c client.Client, child *unstructured.Unstructured, err error, rejected string) (unasked string, _ error) {
	allowed, reviewErr := mayCreate(ctx, c, child)
	switch {
	case reviewErr != nil:
		return "", fmt.Errorf("dry-run its FlinkDeployment child: %w (access review: %w)", err, reviewErr)
	case !allowed:
		return "this identity may not create FlinkDeployments in " + child.GetNamespace(), nil
	}
	return "", apply.Rejected(rejected, child, err)
}

func mayCreate(ctx context.Context, c client.Client, child *unstructured.Unstructured) (bool, error) {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: child.GetNamespace(), Verb: "create",
			Group: v1alpha1.FlinkDeploymentGVK.Group, Version: v1alpha1.FlinkDeploymentGVK.Version, Resource: "flinkdeployments"},
	}}
	if err := c.Create(ctx, review); err != nil {
		return false, err
	}
	return review.Status.Allowed, nil
}
