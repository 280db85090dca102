/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

const (
	ourCRD        = "../../config/crd/bases/bggitops.dev_flinkbluegreendeployments.yaml"
	flinkAPIGroup = "flink.apache.org/v1beta1"
	// testFlinkCRD is the reduced FlinkDeployment CRD that envtest and the
	// demo install; children rendered from the examples must survive it too.
	testFlinkCRD = "../testing/testenv/crds/flink.apache.org_flinkdeployments.yaml"
)

// The Flink Kubernetes Operator's own CRDs, kept in internal/testing/testenv.
var (
	flinkDeplCRD = testenv.OperatorCRD("flinkdeployments")
	flinkBlueCRD = testenv.OperatorCRD("flinkbluegreendeployments")
)

// crdSchema validates and prunes objects the way the API server would for
// one version of a CRD.
type crdSchema struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
}

func loadCRD(t *testing.T, file, version string) *crdSchema {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.Unmarshal(b, crd))
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil))
		validator, _, err := validation.NewSchemaValidator(internal)
		require.NoError(t, err)
		structural, err := structuralschema.NewStructural(internal)
		require.NoError(t, err)
		return &crdSchema{validator: validator, structural: structural}
	}
	t.Fatalf("%s has no version %s", file, version)
	return nil
}

// check returns the schema violations and the fields the server would drop.
func (c *crdSchema) check(obj map[string]any) (errs []string, pruned []string) {
	for _, e := range validation.ValidateCustomResource(nil, obj, c.validator) {
		errs = append(errs, e.Error())
	}
	pruned = pruning.PruneWithOptions(runtime.DeepCopyJSON(obj), c.structural, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	return errs, pruned
}

// TestExamplesValidateAgainstCRDs: every rendered FlinkBlueGreenDeployment of
// examples/repo-layout is valid for our CRD with nothing pruned, its template
// is a valid Flink FlinkDeployment spec (lowercase enums) with nothing
// pruned, and it still validates as upstream's FLIP-503 kind.
func TestExamplesValidateAgainstCRDs(t *testing.T) {
	ours := loadCRD(t, ourCRD, "v1alpha1")
	flinkDeployment := loadCRD(t, flinkDeplCRD, "v1beta1")
	flinkBlueGreen := loadCRD(t, flinkBlueCRD, "v1beta1")
	testFlink := loadCRD(t, testFlinkCRD, "v1beta1")
	for _, overlay := range exampleOverlays(t) {
		t.Run(overlay, func(t *testing.T) {
			objs, err := Build(examples, "overlays/"+overlay, goldenOpts)
			require.NoError(t, err)
			n := 0
			for _, u := range objs {
				if u.GetKind() != "FlinkBlueGreenDeployment" {
					continue
				}
				n++
				errs, pruned := ours.check(u.Object)
				assert.Empty(t, errs, "our CRD")
				assert.Empty(t, pruned, "our CRD would drop these fields")

				child := map[string]any{
					"apiVersion": flinkAPIGroup, "kind": "FlinkDeployment",
					"metadata": map[string]any{"name": u.GetName() + "-blue", "namespace": u.GetNamespace()},
					"spec":     u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"],
				}
				errs, pruned = flinkDeployment.check(child)
				assert.Empty(t, errs, "Flink FlinkDeployment CRD")
				assert.Empty(t, pruned, "the Flink CRD would drop these fields")
				errs, pruned = testFlink.check(child)
				assert.Empty(t, errs, "test FlinkDeployment CRD")
				assert.Empty(t, pruned, "the test Flink CRD would drop these fields")

				upstream := runtime.DeepCopyJSON(u.Object)
				upstream["apiVersion"] = flinkAPIGroup
				errs, _ = flinkBlueGreen.check(upstream)
				assert.Empty(t, errs, "upstream FLIP-503 CRD")
			}
			assert.Equal(t, 1, n)
		})
	}
}

// TestCRDCheckCatchesUppercaseEnums keeps the test above honest.
func TestCRDCheckCatchesUppercaseEnums(t *testing.T) {
	flinkDeployment := loadCRD(t, flinkDeplCRD, "v1beta1")
	errs, pruned := flinkDeployment.check(map[string]any{
		"apiVersion": flinkAPIGroup, "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "x"},
		"spec": map[string]any{
			"job":        map[string]any{"upgradeMode": "SAVEPOINT", "jarURI": "local:///x.jar"},
			"taskManger": map[string]any{},
		},
	})
	assert.NotEmpty(t, errs)
	assert.Equal(t, []string{"spec.taskManger"}, pruned)
}
