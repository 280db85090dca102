/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// flinkbluegreen_ingress.go: the parent Ingress that points at the active
// colour's REST Service, built as the Flink operator builds one, and the
// IngressFailed condition (routeIngress, ensureIngress).

package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/objects"
)

// The Flink operator's names: the REST Service of a FlinkDeployment, its
// port, and the label of the Ingresses it manages. The backend names the
// port rather than its number: it follows the rest.port the active colour
// serves, not the one a commit not yet rolled out asks for.
const (
	restServiceSuffix = "-rest"
	restPortName      = "rest"
	componentLabel    = "component"
	// appliedHashAnnotation records what was last applied, so that a
	// label or annotation removed from spec.ingress is removed too.
	appliedHashAnnotation = "bggitops.dev/ingress-hash"
)

// errIngressNotOwned: an Ingress of the parent's name exists that the
// parent does not control; it is never taken over.
var errIngressNotOwned = errors.New("is not owned by this FlinkBlueGreenDeployment and is left alone: delete it (or choose another name) to let bg-gitops manage it")

// errInvalidIngress: spec.ingress cannot make an Ingress; it waits for a
// new spec.
var errInvalidIngress = errors.New("invalid spec.ingress")

// ingressSpec is spec.ingress, as the Flink operator's IngressSpec.
type ingressSpec struct {
	Template    string                    `json:"template"`
	ClassName   *string                   `json:"className,omitempty"`
	Annotations map[string]string         `json:"annotations,omitempty"`
	Labels      map[string]string         `json:"labels,omitempty"`
	TLS         []networkingv1.IngressTLS `json:"tls,omitempty"`
}

// ensureIngress makes the parent Ingress what route says, writing only a
// difference, as the identity that applied the parent (actor, resolved only
// when something is written). An Ingress it does not control is never
// written: the cache's "absent" is checked against the API server, and an
// existing Ingress is applied only at the resourceVersion it was read at
// (one replaced meanwhile is a conflict, retried). Nor is one with a host
// the platform's IngressPolicy refuses. It returns the annotations of
// spec.ingress the policy dropped from an Ingress it wrote.
func (r *FlinkBlueGreenReconciler) ensureIngress(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, route *bluegreen.Route) ([]string, error) {
	cur, err := r.currentIngress(ctx, p, !route.Delete)
	if err != nil {
		return nil, err
	}
	owned := cur != nil && metav1.IsControlledBy(cur, p)
	switch {
	case route.Delete && !owned:
		return nil, nil
	case route.Delete:
		return nil, r.writeIngress(ctx, p, func(c client.Client) error {
			return client.IgnoreNotFound(c.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}))
		})
	case cur != nil && !owned:
		return nil, fmt.Errorf("Ingress %s %w", p.Name, errIngressNotOwned)
	}
	policy := r.Tenancy.Ingress
	want, dropped, err := ingressObject(p, route.Child, policy)
	if err == nil {
		err = policy.checkHosts(want)
	}
	if err != nil || (owned && ingressCurrent(cur, want)) {
		return nil, err
	}
	u, err := toUnstructured(want)
	if err != nil {
		return nil, err
	}
	if cur != nil {
		u.SetResourceVersion(cur.ResourceVersion)
	}
	return dropped, r.writeIngress(ctx, p, func(c client.Client) error { return objects.Apply(ctx, c, u) })
}

// currentIngress is the Ingress of p's name, nil when there is none; with
// live, an absence in the cache is confirmed by the API server.
func (r *FlinkBlueGreenReconciler) currentIngress(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, live bool) (*networkingv1.Ingress, error) {
	cur := &networkingv1.Ingress{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(p), cur)
	if apierrors.IsNotFound(err) && live {
		err = r.reader().Get(ctx, client.ObjectKeyFromObject(p), cur)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return cur, nil
}

// writeIngress runs write with the client of the identity that applied p.
// The default applier role grants no Ingresses: a refusal says how a
// platform opts a namespace in.
func (r *FlinkBlueGreenReconciler) writeIngress(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, write func(client.Client) error) error {
	c, err := r.actor(ctx, p)
	if err != nil {
		return err
	}
	err = write(c)
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("%w (a platform opts namespace %s in to Ingresses by binding the ClusterRole bg-gitops-ingress-applier "+
			"to the applying ServiceAccount there; see docs/operations/ingress.md)", err, p.Namespace)
	}
	return err
}

// ingressObject is the parent Ingress pointing at child's REST Service,
// built as the Flink operator builds it (IngressUtils): one rule whose
// host and path come from the template, {{name}} and {{namespace}} being
// the parent's. The annotations policy does not allow are left out and
// returned.
func ingressObject(p *v1alpha1.FlinkBlueGreenDeployment, child string, policy IngressPolicy) (*networkingv1.Ingress, []string, error) {
	var spec ingressSpec
	if err := json.Unmarshal(p.Spec.Ingress.Raw, &spec); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errInvalidIngress, err)
	}
	host, path, err := ingressURL(spec.Template, p.Name, p.Namespace)
	if err != nil {
		return nil, nil, err
	}
	labels := maps.Clone(spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[componentLabel] = "ingress"
	annotations, dropped := policy.keepAnnotations(spec.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	ing := &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{controllerRef(p)}},
		Spec: networkingv1.IngressSpec{IngressClassName: spec.ClassName, TLS: spec.TLS,
			Rules: []networkingv1.IngressRule{rule(host, path, child+restServiceSuffix)}},
	}
	hash, err := ingressHash(ing)
	if err != nil {
		return nil, nil, err
	}
	annotations[appliedHashAnnotation] = hash
	return ing, dropped, nil
}

// ingressHash identifies what is applied: labels, annotations and spec.
func ingressHash(ing *networkingv1.Ingress) (string, error) {
	b, err := json.Marshal([]any{ing.Labels, ing.Annotations, ing.Spec})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

func rule(host, path, service string) networkingv1.IngressRule {
	pathType := networkingv1.PathTypeImplementationSpecific
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &pathType, Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Name: restPortName}}}}},
	}}}
}

var (
	namePattern      = regexp.MustCompile(`(?i)\{\{name\}\}`)
	namespacePattern = regexp.MustCompile(`(?i)\{\{namespace\}\}`)
	schemePattern    = regexp.MustCompile(`(?i)^https?://`)
)

// ingressURL is the host and path of a template such as
// "{{name}}.{{namespace}}.flink.example.com" or
// "/{{namespace}}/{{name}}(/|$)(.*)".
func ingressURL(template, name, namespace string) (string, string, error) {
	t := template
	if !schemePattern.MatchString(t) {
		t = "http://" + t
	}
	u, err := url.Parse(fillTemplate(t, name, namespace))
	if err != nil || template == "" {
		return "", "", fmt.Errorf("%w: template %q is not a host and/or path (%v)", errInvalidIngress, template, err)
	}
	return u.Hostname(), u.Path, nil
}

// fillTemplate replaces {{name}} and {{namespace}} (in any case) in t.
func fillTemplate(t, name, namespace string) string {
	return namespacePattern.ReplaceAllLiteralString(namePattern.ReplaceAllLiteralString(t, name), namespace)
}

// ingressCurrent reports whether cur already is want: the same applied
// hash (a label or annotation removed from spec.ingress changes it), want's
// labels and annotations in place (others may add their own), and the same
// spec — an ingressClassName the API server defaulted is not a difference.
func ingressCurrent(cur, want *networkingv1.Ingress) bool {
	spec := cur.Spec.DeepCopy()
	if want.Spec.IngressClassName == nil {
		spec.IngressClassName = nil
	}
	return subset(want.Labels, cur.Labels) && subset(want.Annotations, cur.Annotations) &&
		equality.Semantic.DeepEqual(*spec, want.Spec)
}

func subset(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// controllerRef makes the parent the Ingress's controller, as the Flink
// operator does: garbage collection removes it with the parent.
func controllerRef(p *v1alpha1.FlinkBlueGreenDeployment) metav1.OwnerReference {
	ref := ownerRef(p)
	ref.Controller = ptr(true)
	return ref
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// routeIngress carries out the decision's route and reports the outcome
// in IngressFailed: the Ingress never holds back the blue/green work. It
// returns how soon to try again: a failed write soon, a refusal or an
// Ingress of another owner every minute (its deletion is not watched).
func (r *FlinkBlueGreenReconciler) routeIngress(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, dec *bluegreen.Decision) time.Duration {
	if dec.Route == nil {
		return 0
	}
	dropped, err := r.ensureIngress(ctx, p, dec.Route)
	conds := &dec.Status.Conditions
	if len(dropped) > 0 {
		dec.Events = append(dec.Events, bluegreen.Event{Warning: true, Reason: "IngressAnnotationsDropped",
			Message: fmt.Sprintf("annotations %s of spec.ingress are not written: not in --ingress-annotations (%s)",
				strings.Join(dropped, ", "), strings.Join(r.Tenancy.Ingress.Annotations, ","))})
	}
	if err == nil {
		clearCondition(conds, v1alpha1.IngressFailedCondition)
		return 0
	}
	msg := r.Redact.ForNamespace(p.Namespace).Scrub(err.Error())
	reason := ingressReason(err)
	if setCondition(conds, p.Generation, r.now(), v1alpha1.IngressFailedCondition, metav1.ConditionTrue, reason, msg) {
		dec.Events = append(dec.Events, bluegreen.Event{Warning: true, Reason: reason, Message: msg})
	}
	if reason == "IngressFailed" {
		return forgeRetry
	}
	return time.Minute
}

func ingressReason(err error) string {
	switch {
	case errors.Is(err, errIngressNotOwned):
		return "IngressNotOwned"
	case errors.Is(err, errInvalidIngress):
		return "InvalidIngress"
	case errors.Is(err, errIngressHostNotAllowed):
		return "IngressHostNotAllowed"
	case errors.Is(err, errIngressAnnotationsNotAllowed):
		return "IngressAnnotationsNotAllowed"
	case errors.Is(err, errIngressNotGranted):
		return "IngressNotAllowed"
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err):
		return "IngressRejected"
	}
	return "IngressFailed"
}
