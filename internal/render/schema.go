/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"context"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// kyaml keeps one OpenAPI schema per process (kyaml/openapi: the schema
// version, a custom schema and the parsed definitions are package globals),
// and krusty's Run calls openapi.SetSchema on every run. With no `openapi:`
// field that call only stores the default version under kyaml's own lock
// and changes nothing, and once the built-in schema has been parsed
// (warmSchema) every later use only reads it, so such builds run
// concurrently. A kustomization with an `openapi:` field replaces the schema
// for the whole process and makes kyaml parse it again while other builds
// read it (a data race on plain maps), and the replacement would outlive the
// build and change how every later build merges patches. Those builds run
// alone, from and back to the default schema.
//
// The gate is not a plain RWMutex: a waiting exclusive build must not stop
// shared builds from starting (with sync.RWMutex it would, so one slow
// shared build plus one waiting exclusive build would stall everything),
// and every wait ends at the waiting build's own deadline.
type schemaGate struct {
	mu        sync.Mutex
	shared    int
	exclusive bool
	changed   chan struct{} // closed and replaced whenever the gate opens up
}

var gate = &schemaGate{changed: make(chan struct{})}

// enter waits until the build may run: a shared build while no exclusive
// one runs, an exclusive build while nothing else runs. onWait, if set, is
// called when the build has to wait.
func (g *schemaGate) enter(ctx context.Context, exclusive bool, onWait func()) error {
	for {
		g.mu.Lock()
		if !g.exclusive && (!exclusive || g.shared == 0) {
			if exclusive {
				g.exclusive = true
			} else {
				g.shared++
			}
			g.mu.Unlock()
			return nil
		}
		changed := g.changed
		g.mu.Unlock()
		if onWait != nil {
			onWait()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (g *schemaGate) leave(exclusive bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if exclusive {
		g.exclusive = false
	} else {
		g.shared--
	}
	close(g.changed)
	g.changed = make(chan struct{})
}

var warmOnce sync.Once

// warmSchema parses kyaml's built-in schema now, so that no shared build
// is the one to initialise it lazily while another reads it.
func warmSchema() {
	_ = openapi.Schema()
}

// runGated runs fn inside the gate; an exclusive run starts from and leaves
// behind kyaml's default schema.
func runGated(ctx context.Context, exclusive bool, onWait func(), fn func() error) error {
	warmOnce.Do(warmSchema)
	if err := gate.enter(ctx, exclusive, onWait); err != nil {
		return err
	}
	defer gate.leave(exclusive)
	if exclusive {
		openapi.ResetOpenAPI()
		defer func() {
			openapi.ResetOpenAPI()
			warmSchema()
		}()
	}
	return fn()
}
