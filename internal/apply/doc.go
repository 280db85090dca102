/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package apply owns the server-side apply of a rendered object set: an
// all-or-nothing server-side dry-run of the whole set, a staged apply
// (CustomResourceDefinitions, Namespaces and ClusterRoles first, then the
// rest) with the field manager "bg-gitops" and forced conflicts, drift
// detection that writes only objects that would change, pruning of objects
// dropped from the set (only those stamped with our source annotation), and
// impersonation of a GitRepository's ServiceAccount for every request.
//
// Order of one Apply:
//
//  1. Validate the set: every object is a Kubernetes object, namespaced kinds
//     have a namespace, no two objects share an identity, and no object is a
//     ServiceAccount token Secret (type kubernetes.io/service-account-token,
//     or annotated kubernetes.io/service-account.name), which the API server
//     would fill with the token of an account of the namespace. A confined
//     set (Options.Confined, set for a GitRepository whose namespace
//     --cluster-wide-namespaces does not cover) holds only namespaced
//     objects of Options.Namespace. If any object is refused nothing is
//     written.
//  2. Dry-run every object whose Namespace and kind already exist. An
//     object in a Namespace, or of a CRD, that the same set creates cannot be
//     dry-run before that Namespace or CRD exists; it is deferred. Then
//     Options.Check looks at every object that would be created or changed
//     (the GitRepository reconciler dry-runs a FlinkBlueGreenDeployment's
//     child there). If any dry-run or check rejects an object nothing is
//     written.
//  3. Apply the changed objects of stage 1 and wait for CRDs to be
//     established.
//  4. Dry-run and check the deferred objects. If one is rejected, stage 1 stays
//     applied but nothing of stage 2 is written (the error says so).
//  5. Apply the changed objects of stage 2.
//  6. Prune objects of the previous inventory that are not in the set (without
//     Prune they are left in the cluster and reported as skipped).
//
// The set is all-or-nothing per namespace. When an object of a namespace is
// refused in step 2 or 4 (owned elsewhere, rejected by the dry-run or the
// check), no object of that namespace is written and, after the others are
// applied, Apply returns a *PartialError naming the refused objects: one
// team that created an object of the same name first does not freeze a
// cluster-wide repository for every other namespace. The inventory keeps
// the previous entries of a refused namespace and prune leaves them alone.
// A refused cluster-scoped object (Namespace, CRD, ClusterRole...) still
// keeps the whole set out: any namespace may depend on it.
//
// An object is "changed" when its dry-run result differs from the live
// object by objects.Drifted (the drift `bg-gitops diff --cluster` reports)
// or carries new stamps (revision, source); identity, apply order, CRD
// scope and the field manager come from package objects too. The Applier
// remembers, per identity and object, the desired state and the object as
// it was when last found in sync; when a dry-run returns that
// resourceVersion for the same desired state, nothing changed the object
// and it is not read. Otherwise live objects are read with one LIST per
// kind and namespace when several objects share them (a GET otherwise, or
// when the ServiceAccount may not list).
//
// An idle Apply sends no request at all: the Applier watches the metadata
// of the objects it found in sync (a metadata-only informer per identity,
// namespace and resource, as the identity, so one sees only what it may
// list; its cache keeps of each object only UID, resourceVersion,
// generation and a hash of the rest of the metadata), and an object its
// watch shows untouched since — same UID, and the same generation,
// labels, annotations, owners and finalizers for a kind that keeps a
// generation, else the same resourceVersion — is unchanged with no
// dry-run. An edit, a deletion or a changed label is seen by the next
// Apply (the next poll), which dry-runs and corrects it. The dry-run
// stays for what is not known: a new desired state, an object not yet
// found in sync by this identity, a CRD (whether it is established), a
// watch still listing, and a watch whose list or start failed, which is
// never trusted again (a new one lists afresh, 10 s later, or 10 minutes
// later when the identity may not list or watch the kind: that identity's
// objects are dry-run on every Apply). A watch is trusted for 10 minutes
// after it listed, then listed afresh: a stream that stalls without an
// error delays a correction by that much at most.
//
// Without a dry-run, an idle Apply does not ask whether its identity may
// still write the object: a permission taken away shows at the next
// change or drift, when nothing has been written without it.
package apply
