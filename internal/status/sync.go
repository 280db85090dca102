/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"fmt"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Desired is a status that should be on the commit of Revision.
type Desired struct {
	// Revision is <ref>@sha1:<hex>, as stamped on the object.
	Revision string
	Status   Entry
}

// Sync makes the latest status of each desired context on its commit equal
// to the desired one: it lists the commit's statuses first and posts only
// what differs in state or description, so it never posts a duplicate
// (GitHub keeps at most 1,000 statuses per context and commit). It returns
// the records the forge now has, in the order of desired; on error it
// returns those acknowledged so far with the error, and the caller stores
// them and retries the rest later (after RetryAfter when rate limited).
func Sync(ctx context.Context, p Provider, desired []Desired) ([]v1alpha1.CommitStatusRecord, error) {
	forge := forgeOf(p)
	current := map[string][]Entry{} // sha → statuses, listed once per commit
	var acked []v1alpha1.CommitStatusRecord
	for _, d := range desired {
		_, sha, err := v1alpha1.ParseRevision(d.Revision)
		if err != nil {
			return acked, err
		}
		want := d.Status
		if forge != "" {
			want.Description = Truncate(want.Description, forge)
		}
		if err := ensure(ctx, p, sha, want, current); err != nil {
			return acked, fmt.Errorf("status %s on %s: %w", want.Context, v1alpha1.ShortSHA(sha), err)
		}
		acked = append(acked, v1alpha1.CommitStatusRecord{Context: want.Context,
			Revision: d.Revision, State: string(want.State), Description: want.Description})
	}
	return acked, nil
}

// ensure posts want unless it is already the commit's status for its context.
func ensure(ctx context.Context, p Provider, sha string, want Entry, current map[string][]Entry) error {
	list, listed := current[sha]
	if !listed {
		var err error
		if list, err = p.List(ctx, sha); err != nil {
			return err
		}
	}
	if present(list, want) {
		current[sha] = list
		return nil
	}
	if err := p.Post(ctx, sha, want); err != nil {
		return err
	}
	current[sha] = replace(list, want)
	return nil
}

func present(list []Entry, want Entry) bool {
	for _, s := range list {
		if s.Context == want.Context {
			// A success is final: one already there, whatever it says
			// (a controller that lost its records words it anew), is not
			// posted again.
			return s.State == want.State && (s.Description == want.Description || s.State == StateSuccess)
		}
	}
	return false
}

// replace records want as the newest status of its context.
func replace(list []Entry, want Entry) []Entry {
	out := []Entry{want}
	for _, s := range list {
		if s.Context != want.Context {
			out = append(out, s)
		}
	}
	return out
}
