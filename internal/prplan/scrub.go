/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// scrub.go: keeping a Secret's values out of what the API server says of it.

package prplan

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/redact"
)

// scrubSecret removes the values of obj, when it is a Secret, from msg: a
// refusal (422) may quote the value it refused.
func scrubSecret(obj *unstructured.Unstructured, msg string) string {
	if obj.GetKind() != "Secret" || obj.GroupVersionKind().Group != "" {
		return msg
	}
	var s redact.Scrubber
	for _, field := range []string{"data", "stringData"} {
		values, _, _ := unstructured.NestedStringMap(obj.Object, field)
		for _, v := range values {
			s = s.And(redact.ForValue(v))
			if raw, err := base64.StdEncoding.DecodeString(v); err == nil && field == "data" {
				s = s.And(redact.ForValue(string(raw)))
			}
		}
	}
	return s.Scrub(msg)
}
