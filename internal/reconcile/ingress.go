/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strconv"
	"strings"

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

// The Flink operator's names: the REST Service of a FlinkDeployment, the
// label of the Ingresses it manages, and the REST port's key and default.
const (
	restServiceSuffix = "-rest"
	componentLabel    = "component"
	restPortKey       = "rest.port"
	defaultRestPort   = 8081
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
// difference. It reads through the cache and writes as c (the identity
// that applied the parent).
func (r *FlinkBlueGreenReconciler) ensureIngress(ctx context.Context, c client.Client, p *v1alpha1.FlinkBlueGreenDeployment, route *bluegreen.Route) error {
	cur := &networkingv1.Ingress{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(p), cur)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if exists && !metav1.IsControlledBy(cur, p) {
		return fmt.Errorf("Ingress %s %w", p.Name, errIngressNotOwned)
	}
	if route.Delete {
		if !exists {
			return nil
		}
		return client.IgnoreNotFound(c.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}))
	}
	want, err := ingressObject(p, route.Child)
	if err != nil || (exists && ingressCurrent(cur, want)) {
		return err
	}
	u, err := toUnstructured(want)
	if err != nil {
		return err
	}
	return objects.Apply(ctx, c, u)
}

// ingressObject is the parent Ingress pointing at child's REST Service,
// built as the Flink operator builds it (IngressUtils): one rule whose
// host and path come from the template, {{name}} and {{namespace}} being
// the parent's.
func ingressObject(p *v1alpha1.FlinkBlueGreenDeployment, child string) (*networkingv1.Ingress, error) {
	var spec ingressSpec
	if err := json.Unmarshal(p.Spec.Ingress.Raw, &spec); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidIngress, err)
	}
	host, path, err := ingressURL(spec.Template, p.Name, p.Namespace)
	if err != nil {
		return nil, err
	}
	port, err := restPort(p)
	if err != nil {
		return nil, err
	}
	labels := maps.Clone(spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[componentLabel] = "ingress"
	ing := &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels, Annotations: spec.Annotations,
			OwnerReferences: []metav1.OwnerReference{controllerRef(p)}},
		Spec: networkingv1.IngressSpec{IngressClassName: spec.ClassName, TLS: spec.TLS,
			Rules: []networkingv1.IngressRule{rule(host, path, child+restServiceSuffix, port)}},
	}
	return ing, nil
}

func rule(host, path, service string, port int32) networkingv1.IngressRule {
	pathType := networkingv1.PathTypeImplementationSpecific
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &pathType, Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Number: port}}}}},
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
	t = namespacePattern.ReplaceAllLiteralString(namePattern.ReplaceAllLiteralString(t, name), namespace)
	u, err := url.Parse(t)
	if err != nil || template == "" {
		return "", "", fmt.Errorf("%w: template %q is not a host and/or path (%v)", errInvalidIngress, template, err)
	}
	return u.Hostname(), u.Path, nil
}

// restPort is the REST port the template's Flink configuration sets.
func restPort(p *v1alpha1.FlinkBlueGreenDeployment) (int32, error) {
	v, ok := bluegreen.FlinkConfigValue(&p.Spec.Template.Spec, restPortKey)
	if !ok {
		return defaultRestPort, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n <= 0 || n > 65535 {
		return 0, fmt.Errorf("%w: flinkConfiguration %s %q is not a port", errInvalidIngress, restPortKey, v)
	}
	return int32(n), nil
}

// ingressCurrent reports whether cur already is want (labels and
// annotations of want included in cur's; others' may add their own).
func ingressCurrent(cur, want *networkingv1.Ingress) bool {
	return subset(want.Labels, cur.Labels) && subset(want.Annotations, cur.Annotations) &&
		equality.Semantic.DeepEqual(cur.Spec, want.Spec)
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
// in IngressFailed: the Ingress never holds back the blue/green work.
func (r *FlinkBlueGreenReconciler) routeIngress(ctx context.Context, p *v1alpha1.FlinkBlueGreenDeployment, dec *bluegreen.Decision) {
	if dec.Route == nil {
		return
	}
	c, err := r.actor(ctx, p)
	if err == nil {
		err = r.ensureIngress(ctx, c, p, dec.Route)
	}
	conds := &dec.Status.Conditions
	if err == nil {
		clearCondition(conds, v1alpha1.IngressFailedCondition)
		return
	}
	msg := secrets.forNamespace(p.Namespace).string(err.Error())
	reason := ingressReason(err)
	if setCondition(conds, p.Generation, r.now(), v1alpha1.IngressFailedCondition, metav1.ConditionTrue, reason, msg) {
		dec.Events = append(dec.Events, bluegreen.Event{Warning: true, Reason: reason, Message: msg})
	}
}

func ingressReason(err error) string {
	switch {
	case errors.Is(err, errIngressNotOwned):
		return "IngressNotOwned"
	case errors.Is(err, errInvalidIngress):
		return "InvalidIngress"
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err):
		return "IngressRejected"
	}
	return "IngressFailed"
}
