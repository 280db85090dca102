package apply

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// item is one object of the set, validated and normalised.
type item struct {
	obj  *unstructured.Unstructured
	meta object.ObjMetadata
	// id is Kind/namespace/name, the name used in changes and errors.
	id         string
	namespaced bool
}

// prepare copies and validates objects: each is a Kubernetes object of a
// known (or same-set CRD) kind, namespaced kinds have a namespace,
// cluster-scoped ones lose a stray namespace, and no identity repeats. It
// stamps the source annotation where it is missing and returns the set in
// apply order.
func (a *Applier) prepare(objects []*unstructured.Unstructured, source string) ([]*item, error) {
	scopes := crdScopes(objects)
	var errs []error
	set := make([]*item, 0, len(objects))
	for i, in := range objects {
		it, err := a.newItem(in, scopes)
		if err != nil {
			errs = append(errs, objectError(i, in, err))
			continue
		}
		stampSource(it.obj, source)
		set = append(set, it)
	}
	errs = append(errs, duplicates(set)...)
	if err := joinObjectErrors(errs); err != nil {
		return nil, fmt.Errorf("invalid object set: %w", err)
	}
	sort.SliceStable(set, func(i, j int) bool {
		return ssa.SortableUnstructureds{set[i].obj, set[j].obj}.Less(0, 1)
	})
	return set, nil
}

func objectError(i int, obj *unstructured.Unstructured, err error) error {
	if obj == nil || obj.GetKind() == "" || obj.GetName() == "" {
		return &ObjectError{ID: fmt.Sprintf("object #%d", i+1), Err: err}
	}
	return &ObjectError{ID: utils.FmtUnstructured(obj), Err: err}
}

func (a *Applier) newItem(in *unstructured.Unstructured, scopes map[schema.GroupKind]bool) (*item, error) {
	if in == nil || !utils.IsKubernetesObject(in) {
		return nil, errors.New("apiVersion, kind and metadata.name are required")
	}
	obj := in.DeepCopy()
	gvk := obj.GroupVersionKind()
	namespaced, ok := scopes[gvk.GroupKind()]
	if !ok {
		m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("unknown kind %s: %w", gvk, err)
		}
		namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
	}
	switch {
	case !namespaced:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		return nil, errors.New("namespace not set (set targetNamespace or metadata.namespace)")
	}
	return &item{
		obj:        obj,
		meta:       object.UnstructuredToObjMetadata(obj),
		id:         utils.FmtUnstructured(obj),
		namespaced: namespaced,
	}, nil
}

// crdScopes maps the kinds defined by CRDs of the set to whether they are
// namespaced, so their objects can be validated before the CRD exists.
func crdScopes(objects []*unstructured.Unstructured) map[schema.GroupKind]bool {
	scopes := map[schema.GroupKind]bool{}
	for _, o := range objects {
		if o == nil || !utils.IsCRD(o) {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
		scopes[schema.GroupKind{Group: group, Kind: kind}] = scope == "Namespaced"
	}
	return scopes
}

// stampSource sets the source annotation to source, also over a value from
// Git: prune trusts it, so a manifest must not claim another source.
func stampSource(obj *unstructured.Unstructured, source string) {
	if source == "" {
		return
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[v1alpha1.SourceAnnotation] = source
	obj.SetAnnotations(ann)
}

// duplicates reports every identity (group, kind, namespace, name) that
// appears more than once; the API server would apply both and keep one.
func duplicates(set []*item) []error {
	seen := map[object.ObjMetadata]int{}
	var errs []error
	for _, it := range set {
		seen[it.meta]++
		if seen[it.meta] == 2 {
			errs = append(errs, &ObjectError{ID: it.id, Err: errors.New("defined more than once in the set")})
		}
	}
	return errs
}
