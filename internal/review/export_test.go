/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package review

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CorpusPair is a base and a head FlinkBlueGreenDeployment of the corpus.
type CorpusPair struct {
	Name       string
	Base, Head *unstructured.Unstructured
}

// PlanCorpus is the corpus of TestPlanActions, for the agreement test.
func PlanCorpus(t *testing.T) []CorpusPair {
	var out []CorpusPair
	for _, c := range planCases {
		out = append(out, CorpusPair{Name: c.name, Base: fbgd(t, c.base), Head: fbgd(t, c.head)})
	}
	return out
}
