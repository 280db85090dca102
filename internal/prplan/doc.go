/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// doc.go: the package's purpose.

// Package prplan tells what a pull request will do to the running jobs
// before it is merged: the head's objects against the live ones, a
// server-side dry-run as the applying identity, and each
// FlinkBlueGreenDeployment's blue/green plan (bluegreen.Plan, through
// review) with what its live state adds. The controller posts it on the
// pull request's head; `bg-gitops plan gitrepository NAME --pr N` prints
// it. Nothing is ever applied.
package prplan
