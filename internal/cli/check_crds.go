/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The check of `bg-gitops check` on the CRDs: the cluster serves the ones this
// CLI embeds.

package cli

import (
	"context"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/config"
)

const applyCRDsFix = "install the CRDs of the version the controller and this CLI share: " +
	"kubectl apply --server-side -k config/crd (from that version's source), then rerun the check with that version's CLI"

// crds: every bggitops.dev CRD is served and has the versions, schemas,
// subresources and columns of this CLI's (the controller it was released
// with writes exactly those fields).
func (k *checker) crds(ctx context.Context) []checkLine {
	want, err := embeddedCRDs()
	if err != nil {
		return []checkLine{failing("", "bg-gitops CRDs: this CLI's cannot be read: %v", err)}
	}
	var lines []checkLine
	for _, w := range want {
		got := &apiextensionsv1.CustomResourceDefinition{}
		err := k.c.Get(ctx, types.NamespacedName{Name: w.Name}, got)
		switch {
		case apierrors.IsNotFound(err):
			lines = append(lines, failing(applyCRDsFix, "bg-gitops CRD %s: not installed", w.Name))
		case err != nil:
			lines = append(lines, cannotTell("bg-gitops CRD "+w.Name, err))
		default:
			lines = append(lines, crdLine(w, got))
		}
	}
	return lines
}

func crdLine(want, got *apiextensionsv1.CustomResourceDefinition) checkLine {
	if drift := crdDrift(want, got); drift != "" {
		return failing(applyCRDsFix, "bg-gitops CRD %s: differs from this CLI's (%s %s): %s", want.Name, cliVersion(), want.Spec.Versions[0].Name, drift)
	}
	if !established(got) {
		return failing("kubectl describe crd "+want.Name, "bg-gitops CRD %s: not Established", want.Name)
	}
	return passed("bg-gitops CRD %s: the same as this CLI's", want.Name)
}

// crdDrift says how the served CRD differs from want; "" when it does not.
func crdDrift(want, got *apiextensionsv1.CustomResourceDefinition) string {
	served := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
	for i := range got.Spec.Versions {
		served[got.Spec.Versions[i].Name] = &got.Spec.Versions[i]
	}
	for i := range want.Spec.Versions {
		w := &want.Spec.Versions[i]
		g, ok := served[w.Name]
		if !ok {
			return fmt.Sprintf("version %s is not installed", w.Name)
		}
		delete(served, w.Name)
		if d := versionDrift(w, g); d != "" {
			return fmt.Sprintf("version %s: %s", w.Name, d)
		}
	}
	for name := range served {
		return fmt.Sprintf("the cluster has version %s, which this CLI does not know", name)
	}
	return ""
}

func versionDrift(w, g *apiextensionsv1.CustomResourceDefinitionVersion) string {
	switch {
	case w.Served != g.Served || w.Storage != g.Storage:
		return "served or storage differ"
	case !equality.Semantic.DeepEqual(w.Schema, g.Schema):
		return "the schema differs (fields added or removed)"
	case !equality.Semantic.DeepEqual(w.Subresources, g.Subresources):
		return "the subresources differ"
	case !equality.Semantic.DeepEqual(w.AdditionalPrinterColumns, g.AdditionalPrinterColumns):
		return "the printer columns differ"
	}
	return ""
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// embeddedCRDs are config/crd/bases as built into this binary.
func embeddedCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	const dir = "crd/bases"
	entries, err := fs.ReadDir(config.CRDs, dir)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		data, err := fs.ReadFile(config.CRDs, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("parse %s: %w", e.Name(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}
