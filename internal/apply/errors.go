/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// errors.go: the errors of an Apply — ObjectError, RejectedError (an
// Options.Check verdict) and ObjectErrors, which collects them.

package apply

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ObjectError names the object the API server (or validation) rejected and
// why, e.g. "FlinkBlueGreenDeployment/flink/job: spec.template.spec.job:
// Required value".
type ObjectError struct {
	// ID is Kind/namespace/name (Kind/name for cluster-scoped objects).
	ID string
	// Err is the cause.
	Err error
}

func (e *ObjectError) Error() string { return e.ID + ": " + e.Err.Error() }

func (e *ObjectError) Unwrap() error { return e.Err }

// RejectedError is an Options.Check verdict: the cluster would refuse the
// object, or something the object makes a controller create. Apply reports
// it as the object's ObjectError.
type RejectedError struct{ Err error }

func (e *RejectedError) Error() string { return e.Err.Error() }

func (e *RejectedError) Unwrap() error { return e.Err }

// Rejected is a RejectedError for err, the API server's refusal of obj,
// as "what: field: reason; ..." like every object error.
func Rejected(what string, obj *unstructured.Unstructured, err error) error {
	return &RejectedError{Err: fmt.Errorf("%s: %w", what, apiError(obj, err))}
}

// maxReported bounds how many object errors one error message lists, so a
// broken repository does not produce a condition message of megabytes.
const maxReported = 5

// joinObjectErrors returns nil for no errors, the error itself for one, and
// a summary naming the first few otherwise. errors.As still finds each.
func joinObjectErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return &setError{errs: errs}
}

type setError struct{ errs []error }

func (e *setError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d objects rejected: ", len(e.errs))
	for i, err := range e.errs {
		if i == maxReported {
			fmt.Fprintf(&b, "; and %d more", len(e.errs)-maxReported)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *setError) Unwrap() []error { return e.errs }

// ObjectErrors returns every ObjectError in err.
func ObjectErrors(err error) []*ObjectError {
	var out []*ObjectError
	var walk func(error)
	walk = func(err error) {
		if oe, ok := err.(*ObjectError); ok {
			out = append(out, oe)
			return
		}
		if m, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range m.Unwrap() {
				walk(e)
			}
			return
		}
		if u := errors.Unwrap(err); u != nil {
			walk(u)
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}
