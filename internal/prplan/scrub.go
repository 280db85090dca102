/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// scrub.go: keeping a Secret's values out of what the API server says of it.

package prplan

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/apply"
	"bggitops.dev/bg-gitops/internal/redact"
)

// scrubSecret is the message of err about obj; when obj is a Secret, its
// details are hidden as the controller's apply hides them (apply.APIError)
// and its values removed from whatever is left: a refusal (422) may quote
// the value it refused, so may any other error.
func scrubSecret(obj *unstructured.Unstructured, err error) string {
	if obj.GetKind() != "Secret" || obj.GroupVersionKind().Group != "" {
		return err.Error()
	}
	msg := apply.APIError(obj, err).Error()
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
