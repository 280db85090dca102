/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package reconcile holds the controller-runtime reconcilers: GitRepository
// (fetch, render, apply, prune, commit statuses; gitrepository*.go) and
// FlinkBlueGreenDeployment (the Kubernetes adapter around the pure
// blue/green decision function; flinkbluegreen*.go), and what both use:
//
//   - the commit status reporter (commitstatus.go), outcomes and
//     conditions, and metrics;
//   - Tenancy, the ServiceAccounts GitRepositories apply as and their jobs
//     may run as, and the namespaces whose GitRepositories may write
//     outside their own (tenancy.go);
//   - IngressPolicy, the hosts and annotations a FlinkBlueGreenDeployment's
//     Ingress may carry (ingress_policy.go);
//   - namespace slots and the forge budget, which bound the workers and
//     the forge call time one namespace may take (namespaceslots.go,
//     forgebudget.go);
//   - Applying, the set each GitRepository applied last, by which the
//     reporter trusts the source of an object of another namespace
//     (applying.go);
//   - the stale-read check: a reconcile that read an object older than
//     the API server's writes nothing and runs again soon (stale.go);
//   - the webhook receiver's http.Server and its limits (receiver.go);
//   - the Secret-reading client (secretclient.go) and Setup.
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
