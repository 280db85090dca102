package render

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// finish turns kustomize's output into stamped, namespaced, checked and
// sorted objects.
func finish(m resmap.ResMap, opts Options) ([]*unstructured.Unstructured, error) {
	objs, err := toObjects(m)
	if err != nil {
		return nil, err
	}
	if opts.TargetNamespace != "" {
		setNamespace(objs, opts.TargetNamespace, scopeOf(objs, opts.IsClusterScoped))
	}
	stamp(objs, opts)
	if err := checkDuplicates(objs); err != nil {
		return nil, err
	}
	Sort(objs)
	return objs, nil
}

// toObjects goes through JSON so numbers become int64/float64, the only
// numeric types unstructured can deep-copy.
func toObjects(m resmap.ResMap) ([]*unstructured.Unstructured, error) {
	objs := make([]*unstructured.Unstructured, 0, m.Size())
	for _, r := range m.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("object %s: %w", r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// scopeOf returns a cluster-scope test that knows, in order: CRDs in the
// build, the caller's hook, then kustomize's built-in Kubernetes schema.
func scopeOf(objs []*unstructured.Unstructured, hook func(schema.GroupVersionKind) (bool, bool)) func(*unstructured.Unstructured) bool {
	crds := map[schema.GroupKind]bool{}
	for _, u := range objs {
		if isCRD(u) {
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
			crds[schema.GroupKind{Group: group, Kind: kind}] = scope == "Cluster"
		}
	}
	return func(u *unstructured.Unstructured) bool {
		gvk := u.GroupVersionKind()
		if cluster, ok := crds[gvk.GroupKind()]; ok {
			return cluster
		}
		if hook != nil {
			if cluster, known := hook(gvk); known {
				return cluster
			}
		}
		return openapi.IsCertainlyClusterScoped(kyaml.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()})
	}
}

func setNamespace(objs []*unstructured.Unstructured, ns string, clusterScoped func(*unstructured.Unstructured) bool) {
	for _, u := range objs {
		if !clusterScoped(u) {
			u.SetNamespace(ns)
		}
	}
}

func stamp(objs []*unstructured.Unstructured, opts Options) {
	if opts.Revision == "" && opts.Source == "" {
		return
	}
	for _, u := range objs {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		if opts.Revision != "" {
			a[v1alpha1.RevisionAnnotation] = opts.Revision
		}
		if opts.Source != "" {
			a[v1alpha1.SourceAnnotation] = opts.Source
		}
		u.SetAnnotations(a)
	}
}

// identity is what the API server keys an object by.
func identity(u *unstructured.Unstructured) string {
	gk := u.GroupVersionKind().GroupKind()
	id := gk.Kind
	if gk.Group != "" {
		id += "." + gk.Group
	}
	if ns := u.GetNamespace(); ns != "" {
		return id + " " + ns + "/" + u.GetName()
	}
	return id + " " + u.GetName()
}

// checkDuplicates catches identities that kustomize's own check cannot see:
// the same name in two API versions, or two namespaces merged by
// TargetNamespace.
func checkDuplicates(objs []*unstructured.Unstructured) error {
	seen := make(map[string]bool, len(objs))
	for _, u := range objs {
		id := identity(u)
		if seen[id] {
			return fmt.Errorf("%w %s", ErrDuplicateObject, id)
		}
		seen[id] = true
	}
	return nil
}

func isCRD(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// rank puts Namespaces, then CRDs, before everything that may need them.
func rank(u *unstructured.Unstructured) int {
	switch {
	case u.GetKind() == "Namespace" && u.GroupVersionKind().Group == "":
		return 0
	case isCRD(u):
		return 1
	}
	return 2
}

// Sort orders objects deterministically: Namespaces, CRDs, then by kind,
// namespace, name and API version.
func Sort(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		for _, k := range [][2]string{
			{a.GetKind(), b.GetKind()},
			{a.GetNamespace(), b.GetNamespace()},
			{a.GetName(), b.GetName()},
			{a.GetAPIVersion(), b.GetAPIVersion()},
		} {
			if k[0] != k[1] {
				return k[0] < k[1]
			}
		}
		return false
	})
}
