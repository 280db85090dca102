/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
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
// without host serves every host, so it is refused too.
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
			return fmt.Errorf("%w: %s is not a host this FlinkBlueGreenDeployment may use (--ingress-host-pattern: %s); the Ingress is not written",
				errIngressHostNotAllowed, hostOrAny(host), strings.Join(p.HostPatterns, ","))
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
	for _, tls := range ing.Spec.TLS {
		hosts = append(hosts, tls.Hosts...)
	}
	return hosts
}

func hostOrAny(host string) string {
	if host == "" {
		return "a rule without host (every host)"
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
