/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// tenancy_ingress.go: a child FlinkDeployment's own spec.ingress held to the
// platform's Ingress rules (opt-in, host patterns, annotations) at apply time
// and before a child is written.

package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// A child's own spec.ingress is turned into an Ingress by the Flink
// operator, with the operator's rights: unchecked, it would bypass both
// the namespace's opt-in (the applier's Ingress rights) and the
// IngressPolicy. These errors refuse it.
var (
	// errIngressAnnotationsNotAllowed: an annotation of a child's
	// spec.ingress outside --ingress-annotations.
	errIngressAnnotationsNotAllowed = errors.New("annotations not allowed")
	// errIngressNotGranted: the identity that applies the parent may not
	// create Ingresses in its namespace (the namespace is not opted in).
	errIngressNotGranted = errors.New("Ingresses not granted")
)

// ingressPolicyRefusal reports an error of the platform's Ingress rules
// (IngressPolicy or the namespace's opt-in).
func ingressPolicyRefusal(err error) bool {
	return errors.Is(err, errIngressHostNotAllowed) || errors.Is(err, errIngressAnnotationsNotAllowed) || errors.Is(err, errIngressNotGranted)
}

// parentIngresses refuses a FlinkBlueGreenDeployment whose children's
// spec.ingress (either colour's, see bluegreen.ChildIngress) the policy
// does not allow: checked when it is applied, so that Git hears of it
// before any rollout.
func (t Tenancy) parentIngresses(p *v1alpha1.FlinkBlueGreenDeployment) error {
	ingress := p.Spec.Template.Spec.Ingress
	for _, color := range []bluegreen.Color{bluegreen.Blue, bluegreen.Green} {
		child := bluegreen.ChildName(p.Name, color)
		if err := t.Ingress.checkChild(bluegreen.ChildIngress(ingress, color), child, p.Name, p.Namespace); err != nil {
			return err
		}
	}
	return nil
}

// childIngress refuses the spec.ingress of child, a FlinkDeployment of
// parent, that the platform does not allow, before it is written with c,
// the identity that applied parent.
func (t Tenancy) childIngress(ctx context.Context, c client.Client, ingress *apiextensionsv1.JSON, child, parent, namespace string) error {
	if err := t.Ingress.checkChild(ingress, child, parent, namespace); err != nil {
		return err
	}
	return mayWriteIngresses(ctx, c, ingress, namespace)
}

// checkChild applies the policy to a child's spec.ingress as the Flink
// operator (IngressUtils) builds its Ingress: the host of template with
// {{name}} the child's name (the host patterns' {{name}} being the
// parent's, as for the parent's Ingress) and the tls hosts. An annotation
// outside Annotations is refused, not dropped as on the parent's Ingress:
// the child would then differ from its template, which the blue/green
// controller reads as a spec change, and Git would not say what runs.
func (p IngressPolicy) checkChild(ingress *apiextensionsv1.JSON, child, parent, namespace string) error {
	spec, err := childIngressSpec(ingress)
	if spec == nil || err != nil {
		return err
	}
	if _, dropped := p.keepAnnotations(spec.Annotations); len(dropped) > 0 {
		return fmt.Errorf("%w: annotations %s of spec.template.spec.ingress are not ones a FlinkDeployment's Ingress may carry (--ingress-annotations: %s)",
			errIngressAnnotationsNotAllowed, strings.Join(dropped, ", "), strings.Join(p.Annotations, ","))
	}
	if len(p.HostPatterns) == 0 {
		return nil
	}
	host, _, err := ingressURL(spec.Template, child, namespace)
	if err != nil {
		return err
	}
	hosts := []string{host}
	for _, tls := range spec.TLS {
		hosts = append(hosts, tls.Hosts...)
	}
	if err := p.checkHostList(hosts, parent, namespace); err != nil {
		return fmt.Errorf("spec.template.spec.ingress of FlinkDeployment %s: %w", child, err)
	}
	return nil
}

// childIngressSpec is a child's spec.ingress; nil when it has none.
func childIngressSpec(ingress *apiextensionsv1.JSON) (*ingressSpec, error) {
	if ingress == nil || len(ingress.Raw) == 0 || string(ingress.Raw) == "null" {
		return nil, nil
	}
	spec := &ingressSpec{}
	if err := json.Unmarshal(ingress.Raw, spec); err != nil {
		return nil, fmt.Errorf("%w: spec.template.spec.ingress: %v", errInvalidIngress, err)
	}
	return spec, nil
}

// mayWriteIngresses refuses a child's spec.ingress unless c's identity
// may create Ingresses in namespace: the opt-in a platform gives by
// binding bg-gitops-ingress-applier, which the operator's rights would
// otherwise stand in for.
func mayWriteIngresses(ctx context.Context, c client.Client, ingress *apiextensionsv1.JSON, namespace string) error {
	if spec, _ := childIngressSpec(ingress); spec == nil {
		return nil
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create",
			Group: networkingv1.GroupName, Version: "v1", Resource: "ingresses"},
	}}
	if err := c.Create(ctx, review); err != nil {
		return fmt.Errorf("ask whether Ingresses may be created in %s: %w", namespace, err)
	}
	if review.Status.Allowed {
		return nil
	}
	return fmt.Errorf("%w: spec.template.spec.ingress needs the right to create Ingresses in namespace %s, which the identity that applies it lacks "+
		"(a platform opts a namespace in by binding the ClusterRole bg-gitops-ingress-applier there; see docs/operations/ingress.md)", errIngressNotGranted, namespace)
}

// checkChildIngress refuses to write cs when its spec.ingress is one the
// platform does not allow, as the API server refuses a child: the rollout
// fails and the running colour keeps running. A spec.ingress the child
// already carries (seen) is not checked again: its Ingress exists, and a
// suspension of a child made before the policy must not be refused.
func (r *FlinkBlueGreenReconciler) checkChildIngress(ctx context.Context, c client.Client, p *v1alpha1.FlinkBlueGreenDeployment, cs *bluegreen.ChildSpec, seen *bluegreen.Child) error {
	if seen != nil && bluegreen.SameJSON(seen.Spec.Ingress, cs.Spec.Ingress) {
		return nil
	}
	err := r.Tenancy.childIngress(ctx, c, cs.Spec.Ingress, cs.Name, p.Name, p.Namespace)
	if !ingressPolicyRefusal(err) && !errors.Is(err, errInvalidIngress) {
		return err
	}
	reason := ingressReason(err)
	r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, reason, "BlueGreen", "%s", err.Error())
	return apierrors.NewForbidden(v1alpha1.FlinkDeploymentGVK.GroupVersion().WithResource("flinkdeployments").GroupResource(), cs.Name,
		fmt.Errorf("%s: %w", reason, err))
}
