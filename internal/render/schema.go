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
// read it (a data race on plain maps: a fatal error, not a panic), and the
// replacement would outlive the build and change how every later build
// merges patches. Those builds run alone, from and back to the default
// schema.
//
// The gate is not a plain RWMutex: a waiting exclusive build must not stop
// shared builds from starting (with sync.RWMutex it would, so one slow
// shared build plus one waiting exclusive build would stall everything),
// and every wait ends at the waiting build's own deadline.
//
// # Past a deadline
//
// Build returns at its deadline, but its kustomize goroutine cannot be
// stopped: it runs until its next file operation, which then fails. While
// it runs it may read the schema (merging patches, scoping namespaces) and
// an exclusive one has its custom schema in place, so the gate cannot
// simply be released at the deadline: builds let in would render with the
// custom schema, and restoring the default under a goroutine that reads it
// races on kyaml's maps. Instead every file operation of the sandbox is a
// point where the goroutine touches no kyaml state. A build past its
// deadline that is inside a file operation (at the deadline, or at its next
// one) steps out of the gate there: an exclusive one first restores the
// default schema, which nothing else reads at that moment; the gate then
// lets others in. Before the operation returns (with the time limit error)
// the goroutine steps back in as a shared reader, waiting while an
// exclusive build runs, and unwinds kustomize with the default schema, as
// any shared build; its output is discarded. An abandoned build therefore
// holds the gate past its deadline only while it computes without a file
// operation: kustomize's work on what it has read, which the limits on
// objects and nodes read bound (preflight keeps remote fetches, which
// could wait forever, out of builds that set the schema).
//
// The gate also admits at most slots kustomize goroutines at once, and at
// most one per tenant (running.go): a build is let in when all allow it, in
// one decision, so that no build holds a place while it waits for another.
type schemaGate struct {
	mu        sync.Mutex
	shared    int
	exclusive bool
	// running counts the goroutines let in whose kustomize has not
	// returned, abandoned ones included; slots bounds it.
	running, slots int
	// tenants counts them by tenant (Options.Tenant): at most one each.
	tenants map[string]int
	changed chan struct{} // closed and replaced whenever the gate opens up
}

var gate = &schemaGate{changed: make(chan struct{}), slots: maxRunning}

// seat is one build's place in the gate; its fields change under gate.mu.
type seat struct {
	in        bool // counted in the gate
	exclusive bool // counted as the exclusive build
	tenant    string
}

// enter waits until the build may run: a place among the running
// goroutines is free, none is the tenant's (if the build names one) and,
// for a shared build, no exclusive one runs, for an exclusive build,
// nothing else runs. onWait, if set, is called when the build has to wait.
// The place is the caller's until release.
func (g *schemaGate) enter(ctx context.Context, exclusive bool, tenant string, onWait func()) (*seat, error) {
	for {
		g.mu.Lock()
		if g.mayEnter(exclusive, tenant) {
			s := g.take(exclusive, tenant)
			g.mu.Unlock()
			return s, nil
		}
		changed := g.changed
		g.mu.Unlock()
		if onWait != nil {
			onWait()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// mayEnter reports whether a build may take a place now; g.mu is held.
func (g *schemaGate) mayEnter(exclusive bool, tenant string) bool {
	free := g.running < g.slots && (tenant == "" || g.tenants[tenant] == 0)
	return free && !g.exclusive && (!exclusive || g.shared == 0)
}

// take gives a build a place; g.mu is held.
func (g *schemaGate) take(exclusive bool, tenant string) *seat {
	g.running++
	if exclusive {
		g.exclusive = true
	} else {
		g.shared++
	}
	if tenant != "" {
		if g.tenants == nil {
			g.tenants = map[string]int{}
		}
		g.tenants[tenant]++
	}
	return &seat{in: true, exclusive: exclusive, tenant: tenant}
}

// stepOut takes s out of the gate; its goroutine must be where it touches
// no kyaml state (inside a sandbox file operation). An exclusive seat puts
// the default schema back first, while it still runs alone.
func (g *schemaGate) stepOut(s *seat) {
	g.mu.Lock()
	in, exclusive := s.in, s.exclusive
	g.mu.Unlock()
	if !in {
		return
	}
	if exclusive {
		restoreSchema()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if exclusive {
		g.exclusive = false
	} else {
		g.shared--
	}
	s.in, s.exclusive = false, false
	g.opened()
}

// stepIn puts s back in as a shared reader, waiting (with no deadline: the
// build is past it) while an exclusive build runs.
func (g *schemaGate) stepIn(s *seat) {
	for {
		g.mu.Lock()
		if s.in {
			g.mu.Unlock()
			return
		}
		if !g.exclusive {
			g.shared++
			s.in = true
			g.mu.Unlock()
			return
		}
		changed := g.changed
		g.mu.Unlock()
		<-changed
	}
}

// isIn reports whether s is counted in the gate.
func (g *schemaGate) isIn(s *seat) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return s.in
}

// leave takes s out of the gate for good, once its kustomize returned, and
// frees its place among the running goroutines; an exclusive seat puts the
// default schema back first.
func (g *schemaGate) leave(s *seat) {
	g.stepOut(s)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	if s.tenant != "" {
		if g.tenants[s.tenant]--; g.tenants[s.tenant] <= 0 {
			delete(g.tenants, s.tenant)
		}
	}
	g.opened()
}

// runningNow is how many goroutines hold a place.
func (g *schemaGate) runningNow() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}

// capacity is how many goroutines may hold a place.
func (g *schemaGate) capacity() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.slots
}

func (g *schemaGate) opened() {
	close(g.changed)
	g.changed = make(chan struct{})
}

var warmOnce sync.Once

// warmSchema parses kyaml's built-in schema now, so that no shared build
// is the one to initialise it lazily while another reads it.
func warmSchema() {
	_ = openapi.Schema()
}

// restoreSchema puts kyaml's default schema back, parsed.
func restoreSchema() {
	openapi.ResetOpenAPI()
	warmSchema()
}
