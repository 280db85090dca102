/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// dryrun.go: the server-side dry-run of every object of a set, compared with
// the live object into a plan of what applying it would do.

package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/objects"
)

// plan is an object of the set with what applying it would do.
type plan struct {
	*item
	live *unstructured.Unstructured
	// dry is the dry-run result: the object as the apply would leave it.
	dry    *unstructured.Unstructured
	action string
}

// dryRunAll dry-runs every object of set and compares the result with the
// live object. It returns a plan per accepted object and an ObjectError per
// rejected one; nothing is written. An object its watch shows untouched
// since it was last found in sync is planned unchanged with no request.
func (r *run) dryRunAll(ctx context.Context, set []*item) ([]*plan, []error) {
	plans := make([]*plan, len(set))
	errs := make([]error, len(set))
	dries := make([]*unstructured.Unstructured, len(set))
	var ask []int
	for i, it := range set {
		if r.watchedUntouched(it) {
			plans[i] = &plan{item: it, action: ActionUnchanged}
			continue
		}
		ask = append(ask, i)
	}
	parallel(len(ask), func(n int) {
		i := ask[n]
		dries[i], errs[i] = dryRun(ctx, r.c, set[i])
	})
	var unknown []*item
	var at []int
	for _, i := range ask {
		it := set[i]
		switch {
		case errs[i] != nil:
		case absent(dries[i]):
			r.memo.forget(r.user, it.id)
			plans[i] = &plan{item: it, dry: dries[i], action: ActionCreated}
		case r.memo.inSync(r.user, it, dries[i]):
			plans[i] = &plan{item: it, live: dries[i], dry: dries[i], action: ActionUnchanged}
		default:
			unknown, at = append(unknown, it), append(at, i)
		}
	}
	lv := readLive(ctx, r.c, unknown)
	for n, i := range at {
		plans[i], errs[i] = compare(ctx, r.c, set[i], dries[i], lv[n])
		if errs[i] == nil && plans[i].action == ActionUnchanged {
			r.memo.record(r.user, set[i], plans[i].live)
		}
	}
	var ok []*plan
	var bad []error
	for i := range set {
		if errs[i] != nil {
			bad = append(bad, errs[i])
			continue
		}
		ok = append(ok, plans[i])
	}
	return ok, bad
}

// absent reports whether a dry-run result is of an object that does not
// exist: the API server gives a dry-run create no resourceVersion (it is
// not stored), while any stored object has one. The live read is then
// unnecessary: the apply creates it.
func absent(dry *unstructured.Unstructured) bool {
	return dry.GetResourceVersion() == ""
}

// dryRun applies it server-side without persisting it; the result is what
// the object would be.
func dryRun(ctx context.Context, c client.Client, it *item) (*unstructured.Unstructured, error) {
	dry := it.obj.DeepCopy()
	if err := objects.Apply(ctx, c, dry, client.DryRunAll); err != nil {
		return nil, &ObjectError{ID: it.id, Err: apiError(it.obj, err)}
	}
	return dry, nil
}

// compare plans it from its dry-run result and the live object.
func compare(ctx context.Context, c client.Client, it *item, dry *unstructured.Unstructured, lv live) (*plan, error) {
	if lv.err != nil {
		return nil, &ObjectError{ID: it.id, Err: fmt.Errorf("read: %w", apiError(it.obj, lv.err))}
	}
	if lv.obj != nil && lv.obj.GetResourceVersion() != dry.GetResourceVersion() {
		// The object changed between the dry-run and the read (another
		// writer, or our own annotation request): dry-run and read again,
		// or a change we did not make looks like drift.
		dry, lv.obj = redo(ctx, c, it, dry, lv.obj)
	}
	p := &plan{item: it, live: lv.obj, dry: dry, action: ActionUnchanged}
	switch {
	case lv.obj == nil:
		p.action = ActionCreated
	case objects.Drifted(lv.obj, dry), objects.Restamped(lv.obj, dry):
		p.action = ActionConfigured
	}
	return p, nil
}

// APIError is apiError, for the PR plan's dry-run refusals.
func APIError(obj *unstructured.Unstructured, err error) error { return apiError(obj, err) }

// apiError turns an API server rejection into "field: reason; ...". The
// values of a Secret's fields are never quoted.
func apiError(obj *unstructured.Unstructured, err error) error {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return err
	}
	st := se.Status()
	if st.Details == nil || len(st.Details.Causes) == 0 || !apierrors.IsInvalid(err) {
		return err
	}
	msgs := make([]string, 0, len(st.Details.Causes))
	for _, cause := range st.Details.Causes {
		m := cause.Message
		if utils.IsSecret(obj) {
			m = string(cause.Type) + " (details hidden: secret)"
		}
		if cause.Field != "" {
			m = cause.Field + ": " + m
		}
		msgs = append(msgs, m)
	}
	return errors.New(strings.Join(msgs, "; "))
}

func getLive(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	return cur, err
}

// redo repeats the dry-run and the read of an object that changed in
// between; it keeps the first pair when the repeat fails.
func redo(ctx context.Context, c client.Client, it *item, dry, live *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	dry2, err := dryRun(ctx, c, it)
	if err != nil {
		return dry, live
	}
	cur, err := getLive(ctx, c, live)
	if err != nil {
		return dry, live
	}
	return dry2, cur
}
