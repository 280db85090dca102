/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package bluegreen

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	v1alpha1 "bggitops.dev/bg-gitops/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const hostIngress = `{"template":"{{name}}.flink.example.com","className":"nginx",` +
	`"annotations":{"nginx.ingress.kubernetes.io/proxy-body-size":"0"},"port":12345678901234567890}`

func ingressTemplate(t testing.TB, in *apiextensionsv1.JSON) string {
	t.Helper()
	var s struct{ Template string }
	if err := json.Unmarshal(in.Raw, &s); err != nil {
		t.Fatalf("ingress %s: %v", in.Raw, err)
	}
	return s.Template
}

// sameJSONT compares two JSON values by meaning, numbers kept exact.
func sameJSONT(t *testing.T, a, b *apiextensionsv1.JSON) bool {
	t.Helper()
	var x, y map[string]json.RawMessage
	if json.Unmarshal(a.Raw, &x) != nil || json.Unmarshal(b.Raw, &y) != nil {
		return string(a.Raw) == string(b.Raw)
	}
	return reflect.DeepEqual(flattenJSON(x), flattenJSON(y))
}

func TestChildIngress(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		c        Color
		want     string
	}{
		{"host, blue", hostIngress, Blue, "blue-{{name}}.flink.example.com"},
		{"host, green", hostIngress, Green, "green-{{name}}.flink.example.com"},
		{"path, green", `{"template":"/orders(/|$)(.*)"}`, Green, "/green/orders(/|$)(.*)"},
		{"template that looks prefixed", `{"template":"blue-x"}`, Blue, "blue-blue-x"},
		{"host with a scheme", `{"template":"https://{{name}}.flink.example.com/ui"}`, Green, "https://green-{{name}}.flink.example.com/ui"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := rawJSON(tc.in)
			got := ChildIngress(in, tc.c)
			if tpl := ingressTemplate(t, got); tpl != tc.want {
				t.Errorf("template = %q, want %q", tpl, tc.want)
			}
			if string(in.Raw) != tc.in {
				t.Errorf("the template's ingress was changed: %s", in.Raw)
			}
			if back := templateIngress(got, tc.c); !sameJSONT(t, back, in) {
				t.Errorf("templateIngress(ChildIngress(x)) = %s, want %s", back.Raw, in.Raw)
			}
		})
	}
}

// A child made when the prefix went before a template's scheme
// ("blue-https://…") still reads as that template, so it is not taken for
// a spec change.
func TestAChildPrefixedBeforeItsSchemeReadsAsItsTemplate(t *testing.T) {
	tpl := rawJSON(`{"template":"https://{{name}}.flink.example.com"}`)
	old := rawJSON(`{"template":"blue-https://{{name}}.flink.example.com"}`)
	if got := childTemplateIngress(old, tpl, Blue); !sameJSONT(t, got, tpl) {
		t.Errorf("childTemplateIngress = %s, want %s", got.Raw, tpl.Raw)
	}
}

func TestChildIngressKeepsOtherFields(t *testing.T) {
	got := ChildIngress(rawJSON(hostIngress), Blue)
	want := rawJSON(`{"template":"blue-{{name}}.flink.example.com","className":"nginx",` +
		`"annotations":{"nginx.ingress.kubernetes.io/proxy-body-size":"0"},"port":12345678901234567890}`)
	if !sameJSONT(t, got, want) {
		t.Errorf("got %s, want %s", got.Raw, want.Raw)
	}
}

// TestChildIngressWithoutTemplate: nothing to prefix is copied as it is.
func TestChildIngressWithoutTemplate(t *testing.T) {
	if ChildIngress(nil, Blue) != nil {
		t.Error("no ingress must stay none")
	}
	for _, in := range []string{`{"className":"nginx"}`, `{"template":""}`, `{"template":null}`, `{"template":3}`, `not json`} {
		if got := ChildIngress(rawJSON(in), Green); string(got.Raw) != in {
			t.Errorf("ChildIngress(%s) = %s, want it unchanged", in, got.Raw)
		}
	}
}

func TestDesiredChildPrefixesTheIngress(t *testing.T) {
	spec := baseSpec(v1alpha1.UpgradeModeSavepoint)
	spec.Template.Spec.Ingress = rawJSON(hostIngress)
	d := &decider{p: &v1alpha1.FlinkBlueGreenDeployment{}, spec: &spec}
	d.p.Name = "orders"
	for c, want := range map[Color]string{Blue: "blue-{{name}}.flink.example.com", Green: "green-{{name}}.flink.example.com"} {
		cs := d.desiredChild(c, "/sp/1")
		if got := ingressTemplate(t, cs.Spec.Ingress); got != want {
			t.Errorf("%s child ingress template = %q, want %q", c, got, want)
		}
		child := &Child{Name: cs.Name, Color: c, Spec: cs.Spec}
		if r, diff := Plan(d.baseOf(child), d.spec); r != RolloutNothing {
			t.Errorf("%s child of the unchanged spec: Plan = %s %v, want %s", c, r, diff.Fields, RolloutNothing)
		}
	}
	if got := string(spec.Template.Spec.Ingress.Raw); got != hostIngress {
		t.Errorf("desiredChild changed the template: %s", got)
	}
	spec.Template.Spec.Ingress = nil
	if cs := d.desiredChild(Blue, ""); cs.Spec.Ingress != nil {
		t.Errorf("a template without ingress got %s", cs.Spec.Ingress.Raw)
	}
}

// TestBaseOfStripsOnlyTheChildsPrefix: a child that carries the other
// colour's prefix, or none (made before the prefix), is compared as it is.
func TestBaseOfStripsOnlyTheChildsPrefix(t *testing.T) {
	spec := baseSpec(v1alpha1.UpgradeModeSavepoint)
	spec.Template.Spec.Ingress = rawJSON(`{"template":"x.example.com"}`)
	d := &decider{spec: &spec}
	for _, tc := range []struct {
		c        Color
		template string
		want     Rollout
	}{
		{Blue, "blue-x.example.com", RolloutNothing},
		{Blue, "x.example.com", RolloutNothing},
		{Blue, "green-x.example.com", RolloutBlueGreenSavepoint},
		{Green, "green-x.example.com", RolloutNothing},
		{Green, "blue-green-x.example.com", RolloutBlueGreenSavepoint},
	} {
		cs := *spec.Template.Spec.DeepCopy()
		cs.Ingress = rawJSON(`{"template":"` + tc.template + `"}`)
		if r, diff := Plan(d.baseOf(&Child{Color: tc.c, Spec: cs}), d.spec); r != tc.want {
			t.Errorf("%s child with %q: Plan = %s %v, want %s", tc.c, tc.template, r, diff.Fields, tc.want)
		}
	}
}

func withIngress(w *world, template string) {
	w.parent.Spec.Template.Spec.Ingress = rawJSON(`{"template":"` + template + `","className":"nginx"}`)
}

func (w *world) expectIngress(c Color, want string) {
	w.t.Helper()
	if got := ingressTemplate(w.t, w.mustChild(c).Spec.Ingress); got != want {
		w.fatalf("%s ingress template = %q, want %q", c, got, want)
	}
}

// TestIngressPrefixThroughATransition: each colour carries its prefix, an
// unchanged spec rolls nothing out, a new template is a transition, and
// an aborted colour keeps the prefix it had.
func TestIngressPrefixThroughATransition(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	withIngress(w, "{{name}}.flink.example.com")
	w.step()
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectIngress(Blue, "blue-{{name}}.flink.example.com")
	w.expectNoop(w.step())

	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.Ingress = rawJSON(`{"template":"{{name}}.flink.example.org","className":"nginx"}`)
	}, "main@sha1:r2")
	w.step()
	w.expectState(sSpBlue, jReconciling)
	w.completeSnapshot()
	w.step()
	w.expectState(sToGreen, jReconciling)
	w.expectIngress(Green, "green-{{name}}.flink.example.org")
	w.expectIngress(Blue, "blue-{{name}}.flink.example.com")

	w.annotate(v1alpha1.AbortRequestedAtAnnotation, "a1")
	w.step()
	w.expectState(sActiveBlue, jFailing)
	if !w.children[Green].suspendedSpec() {
		w.fatalf("green not suspended by the abort: %v", w.childNames())
	}
	w.expectIngress(Green, "green-{{name}}.flink.example.org")
	w.advance(time.Minute)
	w.expectNoop(w.step())
}

// TestIngressPrefixInPlace: an in-place patch keeps the colour's prefix.
func TestIngressPrefixInPlace(t *testing.T) {
	w := newWorld(t, v1alpha1.UpgradeModeSavepoint)
	withIngress(w, "/orders(/|$)(.*)")
	w.step()
	w.ready(Blue)
	w.step()
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) {
		s.Template.Spec.FlinkConfiguration = rawJSON(`{"taskmanager.numberOfTaskSlots":"2","state.savepoints.dir":"file:///sp","parallelism.default":"4"}`)
	}, "main@sha1:r2")
	w.step()
	w.expectState(sToBlue, jReconciling)
	w.expectIngress(Blue, "/blue/orders(/|$)(.*)")
	w.ready(Blue)
	w.step()
	w.expectState(sActiveBlue, jRunning)
	w.expectNoop(w.step())
}

// A child made before prefixes whose template really starts with "blue-"
// is not taken for a prefixed one: an in-place change stays in place.
func TestTemplateStartingWithTheColourIsNotStripped(t *testing.T) {
	tmpl := &apiextensionsv1.JSON{Raw: []byte(`{"template":"blue-{{name}}.example.com"}`)}
	if got := childTemplateIngress(tmpl, tmpl, Blue); !SameJSON(got, tmpl) {
		t.Fatalf("legacy child: %s", got.Raw)
	}
	if got := childTemplateIngress(ChildIngress(tmpl, Blue), tmpl, Blue); !SameJSON(got, tmpl) {
		t.Fatalf("prefixed child: %s", got.Raw)
	}
}

// A refused action replaces the decision: the Ingress follows the colour
// that is active after it (a refused new colour leaves blue active).
func TestRejectionRoutesToTheActiveColour(t *testing.T) {
	w := deployed(t, v1alpha1.UpgradeModeStateless)
	w.edit(func(s *v1alpha1.FlinkBlueGreenDeploymentSpec) { s.Template.Spec.Image = "flink:bad" }, "main@sha1:r2")
	d := w.stepRejecting(applyOf("orders-green"), "spec.image: Invalid value")
	if d.Route == nil || d.Route.Child != "orders-blue" {
		t.Fatalf("route after the rejection: %+v, want orders-blue", d.Route)
	}
}
