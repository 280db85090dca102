/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package source

import "strings"

// sha is a well-formed commit hash that no test repository contains.
var sha = strings.Repeat("0123456789", 4)
