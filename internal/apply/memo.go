/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// memo.go: syncMemo, the desired state and the object's metadata last found
// in sync, per identity and object, which lets an idle Apply skip the live
// read, and with a watch of the object the dry-run too.

package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// syncMemo remembers, per identity and object, the desired state last
// found in sync and the object as it was then. The dry-run of an unchanged
// object returns the stored resourceVersion, so when both still match,
// nothing (neither Git nor anyone else) changed the object since: no drift,
// and the object need not be read. This takes the live read, a paged LIST
// of a whole namespace per kind, off every no-op poll. A watch of the
// object that shows it as it was (untouched) takes the dry-run off too.
//
// Entries are per identity: a dry-run is also the identity's permission
// to write the object, which another identity's entry does not prove.
type syncMemo struct {
	mu sync.Mutex
	m  map[memoKey]memoEntry
}

type memoKey struct{ user, id string }

type memoEntry struct {
	hash, resourceVersion string
	uid                   types.UID
	generation            int64
	meta                  string
}

func newSyncMemo() *syncMemo { return &syncMemo{m: map[memoKey]memoEntry{}} }

func (s *syncMemo) entry(user string, it *item) (memoEntry, bool) {
	if s == nil {
		return memoEntry{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[memoKey{user, it.id}]
	return e, ok && e.hash == it.desiredHash()
}

// inSync reports whether desired, whose dry-run returned dry, is known to
// be applied and untouched.
func (s *syncMemo) inSync(user string, it *item, dry *unstructured.Unstructured) bool {
	e, ok := s.entry(user, it)
	return ok && dry.GetResourceVersion() != "" && e.resourceVersion == dry.GetResourceVersion()
}

// untouched reports whether desired is known to be applied, and pm, the
// object as its watch shows it (see shrink), is as it was then. An object
// of a kind whose generation counts every change but those of metadata
// and status (generationCounts) is untouched when its generation and the
// metadata an apply sets or a deletion changes are; any other object
// when its resourceVersion is.
func (s *syncMemo) untouched(user string, it *item, pm *metav1.PartialObjectMetadata) bool {
	e, ok := s.entry(user, it)
	switch {
	case !ok || pm == nil || pm.UID != e.uid:
		return false
	case e.generation > 0:
		return pm.Generation == e.generation && pm.Annotations[hashAnnotation] == e.meta
	default:
		return pm.ResourceVersion == e.resourceVersion
	}
}

// record notes that it is in sync for user as obj, the object as stored.
func (s *syncMemo) record(user string, it *item, obj *unstructured.Unstructured) {
	if s == nil || obj.GetResourceVersion() == "" {
		return
	}
	e := memoEntry{hash: it.desiredHash(), resourceVersion: obj.GetResourceVersion(), uid: obj.GetUID(),
		meta: metaHash(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Labels: obj.GetLabels(), Annotations: obj.GetAnnotations(), OwnerReferences: obj.GetOwnerReferences(),
			Finalizers: obj.GetFinalizers(), DeletionTimestamp: obj.GetDeletionTimestamp()}})}
	if generationCounts(obj.GroupVersionKind().GroupKind()) {
		e.generation = obj.GetGeneration()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[memoKey{user, it.id}] = e
}

// generationCounts reports whether the API server raises the generation
// of an object of kind gk at every change of anything but its metadata
// and status. Custom resources' does (the API server serves them so);
// of the built-in kinds, those below do, while some others set a
// generation once and never raise it (a PriorityClass's description
// changes at generation 1). Any other built-in kind is compared by
// resourceVersion.
func generationCounts(gk schema.GroupKind) bool {
	if !builtinGroups[gk.Group] {
		return true
	}
	return generationKinds[gk]
}

var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true,
	"networking.k8s.io": true, "rbac.authorization.k8s.io": true, "storage.k8s.io": true,
	"scheduling.k8s.io": true, "node.k8s.io": true, "coordination.k8s.io": true,
	"discovery.k8s.io": true, "events.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
	"admissionregistration.k8s.io": true, "apiextensions.k8s.io": true,
	"apiregistration.k8s.io": true, "certificates.k8s.io": true, "resource.k8s.io": true,
	"storagemigration.k8s.io": true, "internal.apiserver.k8s.io": true,
	"authentication.k8s.io": true, "authorization.k8s.io": true,
}

var generationKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "batch", Kind: "Job"}: true, {Group: "batch", Kind: "CronJob"}: true,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:          true,
	{Group: "networking.k8s.io", Kind: "Ingress"}:           true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:     true,
}

// forget drops what is known of object id for user: it was deleted.
func (s *syncMemo) forget(user, id string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, memoKey{user, id})
}

// desiredHash is the hash of the object as it is to be applied, computed
// once per item (an Apply does not change it.obj after prepare).
func (it *item) desiredHash() string {
	if it.hash == "" {
		it.hash = hashOf(it.obj.Object)
	}
	return it.hash
}

// metaHash is the hash of the metadata of pm that neither a generation
// nor a resourceVersion alone tells changed: labels, annotations, owners,
// finalizers and a deletion.
func metaHash(pm *metav1.PartialObjectMetadata) string {
	var owners []metav1.OwnerReference
	var finalizers []string
	if len(pm.OwnerReferences) > 0 {
		owners = pm.OwnerReferences
	}
	if len(pm.Finalizers) > 0 {
		finalizers = pm.Finalizers
	}
	return hashOf([]any{orNil(pm.Labels), orNil(pm.Annotations), owners, finalizers, pm.DeletionTimestamp != nil})
}

// orNil is m, or nil when m is empty: an empty map and none are alike.
func orNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func hashOf(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
