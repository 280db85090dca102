/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// childingress.go: the colour prefix FLIP-503 puts on a child's
// ingress.template (ChildIngress) and its inverse, so each colour gets its
// own address.

package bluegreen

import (
	"encoding/json"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ingressPrefix is what FLIP-503 puts before the ingress.template of a
// child of colour c ("blue-", "green-"; BlueGreenUtils), so that the Flink
// operator gives each colour its own host or path and both can be reached
// during a transition.
func ingressPrefix(c Color) string { return strings.ToLower(string(c)) + "-" }

// ChildIngress is the spec.ingress a child of colour c carries for the
// template's ingress: the same, with the colour's prefix before a
// non-empty template.
//
// A path-only template ("/{{namespace}}/{{name}}(/|$)(.*)") gets the colour
// as a first path segment instead ("/green/…"): FLIP-503's prefix would
// make "green-" its host, which Kubernetes refuses.
//
// A template that starts with a scheme ("https://{{name}}.example.com",
// which the operator's IngressUtils accepts) keeps it first: the prefix
// goes before the host.
func ChildIngress(ingress *apiextensionsv1.JSON, c Color) *apiextensionsv1.JSON {
	return editIngressTemplate(ingress, func(t string) string {
		scheme, t := splitScheme(t)
		if strings.HasPrefix(t, "/") {
			return scheme + "/" + strings.ToLower(string(c)) + t
		}
		return scheme + ingressPrefix(c) + t
	})
}

// splitScheme splits the scheme the operator recognises (http://,
// https://, any case) off an ingress template.
func splitScheme(t string) (scheme, rest string) {
	for _, s := range []string{"http://", "https://"} {
		if len(t) >= len(s) && strings.EqualFold(t[:len(s)], s) {
			return t[:len(s)], t[len(s):]
		}
	}
	return "", t
}

// templateIngress is the template's ingress that a child of colour c was
// given: ChildIngress undone. A template without c's prefix (a child made
// before the prefix was added) is taken as it is, so that it does not look
// changed either.
func templateIngress(ingress *apiextensionsv1.JSON, c Color) *apiextensionsv1.JSON {
	return editIngressTemplate(ingress, func(t string) string {
		scheme, t := splitScheme(t)
		if path := "/" + strings.ToLower(string(c)) + "/"; strings.HasPrefix(t, path) {
			return scheme + t[len(path)-1:]
		}
		return scheme + strings.TrimPrefix(t, ingressPrefix(c))
	})
}

// childTemplateIngress is the template ingress a child runs: the
// template's own when the child carries it, prefixed or (a child made
// before prefixes) as it is; otherwise the child's, prefix removed. A
// template that really starts with "blue-" is then never mistaken for a
// prefixed one.
func childTemplateIngress(child, template *apiextensionsv1.JSON, c Color) *apiextensionsv1.JSON {
	if SameJSON(child, ChildIngress(template, c)) || SameJSON(child, template) {
		return template.DeepCopy()
	}
	return templateIngress(child, c)
}

// SameJSON reports whether two raw JSON values hold the same value.
func SameJSON(a, b *apiextensionsv1.JSON) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a.Raw, &x) != nil || json.Unmarshal(b.Raw, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// editIngressTemplate returns a copy of ingress with edit applied to its
// template. Every other field is kept as it is (raw JSON, so numbers and
// unknown fields survive); an ingress without a string template, or with
// an empty one, has no address to prefix and is only copied.
func editIngressTemplate(ingress *apiextensionsv1.JSON, edit func(string) string) *apiextensionsv1.JSON {
	if ingress == nil {
		return nil
	}
	var fields map[string]json.RawMessage
	var template string
	if json.Unmarshal(ingress.Raw, &fields) != nil || json.Unmarshal(fields["template"], &template) != nil || template == "" {
		return ingress.DeepCopy()
	}
	raw, err := json.Marshal(edit(template))
	if err != nil {
		return ingress.DeepCopy()
	}
	fields["template"] = raw
	out, err := json.Marshal(fields)
	if err != nil {
		return ingress.DeepCopy()
	}
	return &apiextensionsv1.JSON{Raw: out}
}
