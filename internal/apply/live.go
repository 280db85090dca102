/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// live.go: readLive, which reads the in-cluster objects of a set with one
// LIST per kind and namespace or a GET each, a bounded number at a time.

package apply

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listPageSize bounds one LIST response.
const listPageSize = 500

// concurrency is how many requests one Apply has in flight at a time.
const concurrency = 4

// live is the in-cluster state of one object: obj is nil when it does not
// exist; err is a read error other than NotFound.
type live struct {
	obj *unstructured.Unstructured
	err error
}

type bucketKey struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// readLive reads the in-cluster objects of set: one paged LIST per kind and
// namespace holding several objects, a GET for the others or where the
// LIST is refused (a ServiceAccount may be allowed get but not list).
func readLive(ctx context.Context, c client.Client, set []*item) []live {
	out := make([]live, len(set))
	buckets := map[bucketKey][]int{}
	for i, it := range set {
		k := bucketKey{gvk: it.obj.GroupVersionKind(), namespace: it.obj.GetNamespace()}
		buckets[k] = append(buckets[k], i)
	}
	var gets []int
	for k, idx := range buckets {
		if len(idx) < 2 || !set[idx[0]].namespaced {
			gets = append(gets, idx...)
			continue
		}
		found, err := list(ctx, c, k)
		if err != nil {
			gets = append(gets, idx...)
			continue
		}
		for _, i := range idx {
			out[i].obj = found[set[i].obj.GetName()]
		}
	}
	parallel(len(gets), func(n int) {
		i := gets[n]
		out[i] = get(ctx, c, set[i].obj)
	})
	return out
}

func get(ctx context.Context, c client.Client, want *unstructured.Unstructured) live {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(want.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(want), obj)
	switch {
	case apierrors.IsNotFound(err):
		return live{}
	case err != nil:
		return live{err: err}
	}
	return live{obj: obj}
}

// list returns the objects of one kind in one namespace by name.
func list(ctx context.Context, c client.Client, k bucketKey) (map[string]*unstructured.Unstructured, error) {
	found := map[string]*unstructured.Unstructured{}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	for {
		err := c.List(ctx, l, client.InNamespace(k.namespace), client.Limit(listPageSize), client.Continue(l.GetContinue()))
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			obj := l.Items[i]
			obj.SetGroupVersionKind(k.gvk)
			found[obj.GetName()] = &obj
		}
		if l.GetContinue() == "" {
			return found, nil
		}
	}
}

// parallel runs f(0..n-1) with at most concurrency calls at a time.
func parallel(n int, f func(i int)) {
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
