/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package reconcile holds the controller-runtime reconcilers: GitRepository
// (fetch, render, apply, prune, commit statuses; gitrepository*.go) and
// FlinkBlueGreenDeployment (the Kubernetes adapter around the pure
// blue/green decision function; flinkbluegreen*.go), and what both use:
// the commit status reporter, outcomes and conditions, namespace slots,
// metrics, the Secret-reading client and Setup.
package reconcile

// RBAC of the controller, generated into config/rbac by controller-gen.
// +kubebuilder:rbac:groups=bggitops.dev,resources=gitrepositories;flinkbluegreendeployments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bggitops.dev,resources=gitrepositories/status;flinkbluegreendeployments/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bggitops.dev,resources=flinkbluegreendeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=flink.apache.org,resources=flinkdeployments;flinkstatesnapshots,verbs=get;list;watch;create;update;patch;delete
// Secrets are read one by one, never listed or cached (see ClientOptions).
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// The metrics endpoint (--metrics-secure) asks the API server who a caller
// is and whether it may read metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
