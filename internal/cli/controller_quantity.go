/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The flag type of the controller's byte limits: a Kubernetes quantity such as
// 64Mi.

package cli

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// quantity is a flag of a byte count written as a Kubernetes quantity
// (64Mi, 2G, 1048576); a negative value means no limit.
type quantity struct{ v *int64 }

func newQuantity(p *int64, def int64) *quantity {
	*p = def
	return &quantity{v: p}
}

func (q *quantity) String() string {
	if q.v == nil {
		return ""
	}
	return resource.NewQuantity(*q.v, resource.BinarySI).String()
}

func (q *quantity) Set(s string) error {
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a quantity such as 64Mi: %w", s, err)
	}
	*q.v = v.Value()
	return nil
}

func (q *quantity) Type() string { return "quantity" }
