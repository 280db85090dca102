/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// secret.go: SecretValue, a Secret's value without surrounding whitespace.

package source

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// SecretValue returns the value of key in sec without surrounding
// whitespace: a token written with `kubectl create secret --from-file` ends
// in a newline that is never part of it, and every reader of a token must
// see the same bytes (the webhook path is derived from the one the
// signature is checked with). The error names the Secret and the key, never
// the value.
func SecretValue(sec *corev1.Secret, key string) ([]byte, error) {
	v := bytes.TrimSpace(sec.Data[key])
	if len(v) == 0 {
		return nil, fmt.Errorf("secret %s has no key %q", sec.Name, key)
	}
	return v, nil
}
