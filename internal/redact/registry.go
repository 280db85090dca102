/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// registry.go: Registry, which records secret values by where they live
// (NoteSecret, NoteRendered) and hands out the Scrubber of an object's
// messages (ForSource, ForNamespace).

package redact

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Secret values never reach a condition, an event, a log line or a commit
// status. Errors quote what they were given: the API server quotes an
// invalid field value (a Secret's value copied into a label by a kustomize
// replacement), a forge or proxy may echo the request's Authorization
// header. So every message the reconcilers publish passes one Scrubber
// (gitOutcome and deploymentOutcome, the commit status reporter, the
// rejection of a blue/green decision) that replaces the values of
//
//   - the Secrets of the GitRepository's last rendered set (and, when a
//     build fails, the values its secretGenerators read), and
//   - the Secrets the controller read: git credentials, webhook and forge
//     tokens,
//
// in every spelling an error may use (raw, base64 as in a Secret's data,
// quoted and JSON-escaped, and line by line for multi-line values such as
// keys), with Redacted, where they stand on their own (Scrubber.string).
// Values shorter than minSecretLen are left alone: replacing "1" or "yes"
// everywhere would garble every message while hiding nothing; so are
// values that are public names anyway (NoteRendered). What is kept of the
// values is bounded (see form, maxSourceBytes, maxRegistryBytes): values
// it cannot keep are never dropped, the messages that could show them are
// withheld instead.
const (
	Redacted     = "***"
	minSecretLen = 4
)

// withheldMessage replaces every message that could show a value the
// registry does not keep: the values of a source over its bounds
// (maxSourceForms, maxSourceBytes, the scan of a failed build's
// checkout), or of the largest sources while the registry is over its own
// (maxRegistryBytes).
var withheldMessage = fmt.Sprintf("message withheld: the repository's Secret values are too large to scrub from messages "+
	"(over %d spellings or %d MiB: its rendered Secrets, the files its secretGenerators read, or a Secret the controller reads; "+
	"or %d MiB for all); make them fewer or smaller (keep large files out of Secrets), "+
	"or run kustomize build on the revision to see a build error",
	maxSourceForms, maxSourceBytes>>20, maxRegistryBytes>>20)

// maxRegistryBytes bounds the forms of all sources (see formCost): 8
// sources at their bound, thousands of ordinary ones, an eighth of the
// controller's memory limit. Beyond, the largest sources are withheld
// until the rest fits: whoever keeps the most pays first.
const maxRegistryBytes = 64 << 20

// NewRegistry is an empty registry, bounded by maxRegistryBytes. A
// controller keeps one and hands it to everything that reads Secrets or
// publishes messages.
// A nil *Registry records nothing and scrubs nothing.
func NewRegistry() *Registry { return newRegistry(maxRegistryBytes) }

// Registry remembers secret values by where they live, so that a
// message about an object is scrubbed of the values its readers could
// otherwise learn from it: a GitRepository's messages of the values of its
// render (in whatever namespace) and of the Secrets read in its namespace,
// a FlinkBlueGreenDeployment's of every known value in its namespace.
type Registry struct {
	mu         sync.RWMutex
	maxCost    int
	cost       int // of every record
	rendered   map[types.NamespacedName]*record
	renderedIn map[string]map[types.NamespacedName]*record // namespace → the renders with Secrets there
	// generated: GitRepository → the values its secretGenerators read,
	// known after a failed build (see NoteBuild); cleared by a good one.
	generated map[types.NamespacedName]*record
	read      map[string]map[string]*record // namespace → Secret → its values
}

// A record is what the registry keeps of one source of values: a
// GitRepository's last render, the generator values of its failed build,
// a Secret the controller read; replaced whole when the source is noted
// again.
type record struct {
	byNS     map[string]*matcher // by the namespace the values live in
	cost     int
	withheld bool // its values are not kept: withhold what could show them
}

func newRegistry(maxCost int) *Registry {
	return &Registry{maxCost: maxCost, rendered: map[types.NamespacedName]*record{},
		renderedIn: map[string]map[types.NamespacedName]*record{}, generated: map[types.NamespacedName]*record{},
		read: map[string]map[string]*record{}}
}

// newRecord compiles what c collected; nil when there is nothing to scrub.
func newRecord(c *collector) *record {
	if !c.over && c.forms == 0 {
		return nil
	}
	r := &record{byNS: map[string]*matcher{}, withheld: c.over}
	for ns, forms := range c.byNS {
		if r.byNS[ns] = newMatcher(forms); r.byNS[ns] != nil {
			r.cost += matcherOverhead
		}
	}
	r.cost += c.cost
	return r
}

// NoteSecret records the values of a Secret the controller read.
func (s *Registry) NoteSecret(sec *corev1.Secret) {
	if s == nil {
		return
	}
	c := newCollector()
	for _, v := range sec.Data {
		c.value(sec.Namespace, string(v))
	}
	for _, v := range sec.StringData {
		c.value(sec.Namespace, v)
	}
	r := newRecord(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read[sec.Namespace] == nil {
		s.read[sec.Namespace] = map[string]*record{}
	}
	s.replace(s.read[sec.Namespace][sec.Name], r)
	s.read[sec.Namespace][sec.Name] = r
	if r == nil {
		delete(s.read[sec.Namespace], sec.Name)
	}
	s.fit()
}

// NoteRendered records the values of the Secrets among the objects a
// GitRepository rendered (namespace set: they are stamped and defaulted).
//
// A value that is also the name or namespace of a rendered object, or of
// the GitRepository, is not scrubbed: whoever reads the message reads that
// name anyway, and scrubbing it would garble every message about the
// object (a Kafka user named after the job it belongs to, "state-machine",
// would turn "state-machine-blue active" into "***-blue active").
func (s *Registry) NoteRendered(source types.NamespacedName, objs []*unstructured.Unstructured) {
	if s == nil {
		return
	}
	public := map[string]bool{source.Name: true, source.Namespace: true}
	for _, u := range objs {
		public[u.GetName()], public[u.GetNamespace()] = true, true
	}
	c := newCollector()
	for _, u := range objs {
		if u.GetKind() != "Secret" || u.GroupVersionKind().Group != "" {
			continue
		}
		for _, v := range renderedValues(u) {
			if !public[strings.TrimSpace(v)] {
				c.value(u.GetNamespace(), v) // over, it still notes the namespace
			}
		}
	}
	s.setRendered(source, newRecord(c))
}

// Forget drops what was noted for source's renders and builds (a source
// that renders nothing any more).
func (s *Registry) Forget(source types.NamespacedName) {
	if s == nil {
		return
	}
	s.setRendered(source, nil)
	s.noteGenerated(source, nil)
}

// renderedValues are the values of a rendered Secret, data decoded.
func renderedValues(u *unstructured.Unstructured) []string {
	var out []string
	data, _ := u.Object["data"].(map[string]any)
	for _, v := range data {
		if str, ok := v.(string); ok {
			// Forms of the decoded value include its base64 spelling.
			if raw, err := base64.StdEncoding.DecodeString(str); err == nil {
				str = string(raw)
			}
			out = append(out, str)
		}
	}
	stringData, _ := u.Object["stringData"].(map[string]any)
	for _, v := range stringData {
		if str, ok := v.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

func (s *Registry) setRendered(source types.NamespacedName, r *record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.rendered[source]; old != nil {
		for ns := range old.byNS {
			delete(s.renderedIn[ns], source)
			if len(s.renderedIn[ns]) == 0 {
				delete(s.renderedIn, ns)
			}
		}
	}
	s.replace(s.rendered[source], r)
	delete(s.rendered, source)
	if r == nil {
		return
	}
	s.rendered[source] = r
	for ns := range r.byNS {
		if s.renderedIn[ns] == nil {
			s.renderedIn[ns] = map[types.NamespacedName]*record{}
		}
		s.renderedIn[ns][source] = r
	}
	s.fit()
}

func (s *Registry) noteGenerated(source types.NamespacedName, r *record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replace(s.generated[source], r)
	s.generated[source] = r
	if r == nil {
		delete(s.generated, source)
	}
	s.fit()
}

// replace accounts for r taking old's place; the maps are the caller's.
// Locked.
func (s *Registry) replace(old, r *record) {
	if old != nil {
		s.cost -= old.cost
	}
	if r != nil {
		s.cost += r.cost
	}
}

// fit withholds the largest records while the registry is over its bound.
// Locked.
func (s *Registry) fit() {
	for s.cost > s.maxCost {
		largest := s.largest()
		if largest == nil || largest.cost == 0 {
			return
		}
		s.cost -= largest.cost
		for ns := range largest.byNS {
			largest.byNS[ns] = nil
		}
		largest.cost, largest.withheld = 0, true
	}
}

// largest is the record that costs the most. Locked.
func (s *Registry) largest() *record {
	var top *record
	consider := func(r *record) {
		if top == nil || r.cost > top.cost {
			top = r
		}
	}
	for _, r := range s.rendered {
		consider(r)
	}
	for _, r := range s.generated {
		consider(r)
	}
	for _, bySecret := range s.read {
		for _, r := range bySecret {
			consider(r)
		}
	}
	return top
}

// ForSource is the Scrubber of a GitRepository's messages: the values of
// its own render, wherever they landed, and all known in its namespace.
func (s *Registry) ForSource(source types.NamespacedName) Scrubber {
	if s == nil {
		return Scrubber{}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	sc := s.inNamespace(source.Namespace)
	sc.take(s.generated[source], "")
	sc.take(s.rendered[source], "")
	return sc
}

// ForNamespace is the Scrubber of the messages of an object in ns: the
// values of every Secret known in ns, rendered or read.
func (s *Registry) ForNamespace(ns string) Scrubber {
	if s == nil {
		return Scrubber{}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.inNamespace(ns)
}

func (s *Registry) inNamespace(ns string) Scrubber {
	var sc Scrubber
	for _, r := range s.renderedIn[ns] {
		sc.take(r, ns)
	}
	for _, r := range s.read[ns] {
		sc.take(r, ns)
	}
	return sc
}

// take adds the values of r in ns ("": in every namespace); r withheld,
// sc withholds.
func (sc *Scrubber) take(r *record, ns string) {
	switch {
	case r == nil:
	case r.withheld:
		sc.withheld = true
	case ns != "":
		if m := r.byNS[ns]; m != nil {
			sc.matchers = append(sc.matchers, m)
		}
	default:
		for _, m := range r.byNS {
			if m != nil {
				sc.matchers = append(sc.matchers, m)
			}
		}
	}
}
