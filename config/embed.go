/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package config embeds the generated CustomResourceDefinitions so tests and
// `bg-gitops dev` install exactly what `kubectl apply -k config/default` does.
package config

import "embed"

// CRDs holds config/crd/bases/*.yaml.
//
//go:embed crd/bases/*.yaml
var CRDs embed.FS
