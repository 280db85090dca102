/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package review owns what `bg-gitops diff` reports: it compares two rendered
// object sets (base and head of a pull request, or the live cluster and the
// head), masks Secret values, announces for every FlinkBlueGreenDeployment
// what the controller will do (with bluegreen.Plan, the rule the
// controller itself acts on) and writes the report as text, markdown or JSON.
// It talks to no Kubernetes API.
package review
