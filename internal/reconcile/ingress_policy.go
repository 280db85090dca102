/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// ingress_policy.go: IngressPolicy, the hosts and annotations a platform lets
// a FlinkBlueGreenDeployment's Ingress carry.

package reconcile

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/apply"
)

// errIngressHostNotAllowed: a host of spec.ingress is outside every
// --ingress-host-pattern; the Ingress is not written.
var errIngressHostNotAllowed = errors.New("host not allowed")

// IngressPolicy is what a platform lets a FlinkBlueGreenDeployment's
// Ingress say: an Ingress controller serves every namespace, so a host or
// a controller annotation (a configuration snippet, an auth bypass) of one
// tenant's Ingress reaches the others'.
type IngressPolicy struct {
	// HostPatterns (--ingress-host-pattern): a host of the Ingress (its
	// rule and its TLS hosts) must match one, {{name}} and {{namespace}}
	// being the FlinkBlueGreenDeployment's and "*" one DNS label. Empty:
	// any host.
	HostPatterns []string
	// Annotations (--ingress-annotations): the annotation keys written on
	// the Ingress; an entry ending in "/" allows a prefix, "*" any. Others
	// of spec.ingress.annotations are dropped. nil: every annotation;
	// empty: none.
	Annotations []string
}

// checkHosts refuses an Ingress with a host outside HostPatterns: a rule
// without host and a default backend serve every host, and a TLS entry
// without hosts is the Ingress controller's wildcard host, so they are
// refused too.
func (p IngressPolicy) checkHosts(ing *networkingv1.Ingress) error {
	return p.checkHostList(ingressHosts(ing), ing.Name, ing.Namespace)
}

// checkHostList refuses a host outside HostPatterns, {{name}} and
// {{namespace}} being name and namespace; "" is a rule without host.
func (p IngressPolicy) checkHostList(hosts []string, name, namespace string) error {
	if len(p.HostPatterns) == 0 {
		return nil
	}
	for _, host := range hosts {
		if !p.hostAllowed(host, name, namespace) {
			return fmt.Errorf("%w: %s is not a host this Ingress may use (--ingress-host-pattern: %s); the Ingress is not written",
				errIngressHostNotAllowed, hostOrAny(host), strings.Join(p.HostPatterns, ","))
		}
	}
	return nil
}

var ingressKind = schema.GroupKind{Group: networkingv1.GroupName, Kind: "Ingress"}

// checkApplied is the apply check of an Ingress of a tenant's
// GitRepository (Tenancy.check): it keeps to the policy as a
// FlinkBlueGreenDeployment's Ingress does, but its annotations cannot be
// dropped from it, so one the policy does not allow refuses it (bg-gitops's
// own stamps are not the tenant's).
func (p IngressPolicy) checkApplied(obj *unstructured.Unstructured) error {
	if obj.GroupVersionKind().GroupKind() != ingressKind {
		return nil
	}
	ing := &networkingv1.Ingress{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, ing); err != nil {
		return &apply.RejectedError{Err: fmt.Errorf("%w: %v", errInvalidIngress, err)}
	}
	if err := p.checkHosts(ing); err != nil {
		return &apply.RejectedError{Err: err}
	}
	if _, dropped := p.keepAnnotations(ing.Annotations); len(dropped) > 0 {
		dropped = slices.DeleteFunc(dropped, func(k string) bool { return strings.HasPrefix(k, v1alpha1.GroupVersion.Group+"/") })
		if len(dropped) > 0 {
			return &apply.RejectedError{Err: fmt.Errorf("annotations %s are not in --ingress-annotations (%s); the Ingress is not written",
				strings.Join(dropped, ", "), strings.Join(p.Annotations, ","))}
		}
	}
	return nil
}

func (p IngressPolicy) hostAllowed(host, name, namespace string) bool {
	for _, pattern := range p.HostPatterns {
		if hostMatches(pattern, host, name, namespace) {
			return true
		}
	}
	return false
}

// hostMatches compares host with pattern label by label, after filling
// {{name}} and {{namespace}} in; "*" matches one label (never a wildcard
// host's "*").
func hostMatches(pattern, host, name, namespace string) bool {
	want := strings.Split(strings.ToLower(fillTemplate(pattern, name, namespace)), ".")
	got := strings.Split(strings.ToLower(host), ".")
	if host == "" || len(want) != len(got) {
		return false
	}
	for i := range want {
		if got[i] == "*" || (want[i] != got[i] && (want[i] != "*" || got[i] == "")) {
			return false
		}
	}
	return true
}

func ingressHosts(ing *networkingv1.Ingress) []string {
	var hosts []string
	for _, r := range ing.Spec.Rules {
		hosts = append(hosts, r.Host)
	}
	if ing.Spec.DefaultBackend != nil {
		hosts = append(hosts, "")
	}
	for _, tls := range ing.Spec.TLS {
		if len(tls.Hosts) == 0 {
			hosts = append(hosts, "")
		}
		hosts = append(hosts, tls.Hosts...)
	}
	return hosts
}

func hostOrAny(host string) string {
	if host == "" {
		return "a rule, TLS entry or default backend without host (every host)"
	}
	return "host " + host
}

// keepAnnotations returns the annotations Annotations allows and the sorted
// keys of those it drops.
func (p IngressPolicy) keepAnnotations(annotations map[string]string) (map[string]string, []string) {
	if p.Annotations == nil {
		return maps.Clone(annotations), nil
	}
	kept := map[string]string{}
	var dropped []string
	for k, v := range annotations {
		if p.annotationAllowed(k) {
			kept[k] = v
		} else {
			dropped = append(dropped, k)
		}
	}
	sort.Strings(dropped)
	return kept, dropped
}

func (p IngressPolicy) annotationAllowed(key string) bool {
	return slices.ContainsFunc(p.Annotations, func(entry string) bool {
		return entry == "*" || entry == key || (strings.HasSuffix(entry, "/") && strings.HasPrefix(key, entry))
	})
}
