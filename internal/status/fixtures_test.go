/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

// sha40 is a well-formed commit hash.
const sha40 = "0123456789abcdef0123456789abcdef01234567"
