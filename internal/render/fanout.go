/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"bytes"
	"math"

	"sigs.k8s.io/kustomize/api/types"
)

// Patches and replacements are amplifiers too: kustomize copies a patch
// into every object its target selects, and a replacement's source into
// every field its targets select, with no file read in between. The read
// limits see the patch or the source once; kustomize holds a copy per
// object (a patch of 20,000 list items on 150 ConfigMaps took 1.2 GiB).
// Applying a patch also walks the object (a strategic merge walks both
// trees, a JSON patch turns the object into JSON and back): P patches on N
// objects take time with P × N × the objects' size, again with no file
// operation for the deadline to stop at. So every patch and replacement is
// charged to the node and byte budgets once per object it may reach, before
// kustomize applies it: at the reads of the objects it may reach, which
// come before kustomize's transform stage.

// cost is what one copy of something costs the budgets.
type cost struct{ nodes, bytes int64 }

func (c cost) plus(o cost) cost { return cost{satAdd(c.nodes, o.nodes), satAdd(c.bytes, o.bytes)} }

func (c cost) times(n int64) cost { return cost{satMul(c.nodes, n), satMul(c.bytes, n)} }

func (c cost) atLeast(o cost) cost { return cost{max(c.nodes, o.nodes), max(c.bytes, o.bytes)} }

// walkRatio is how many nodes of the objects a patch is applied to count as
// one node: measured, applying a patch takes 1-6 µs per node of the object
// (a mapping of a thousand keys, a JSON round trip), so the walks a build
// may make within the default node limit take at most about 16 s.
const walkRatio = 16

// fanOut is a build's account of its patches and replacements: what each
// may cost per object, and what has been charged. Only the goroutine that
// runs the build's kustomize uses it (and the preflight, before it starts).
type fanOut struct {
	// counted holds the kustomizations whose patches are counted. A
	// kustomization built n times applies its patches to n disjoint sets of
	// objects, all read after its first read: counting it once, against
	// the objects read since, is enough. A component applies its patches
	// to the objects of the kustomization that includes it, read before
	// it: it counts at every read, against every object.
	counted map[string]bool
	// configs are the patches and replacements of the transformer configs
	// each kustomization lists (checkConfigs), by its path.
	configs map[string][]spread
	// patchFiles and replacementFiles are the files peeked, by path.
	patchFiles       map[string]peekedPatch
	replacementFiles map[string][]types.Replacement
	// configurationFiles are the configurations files peeked, by path:
	// the fieldSpecs they add for labels, annotations, names, namespaces.
	configurationFiles map[string][]fieldSpecPath

	targeted   targetedPatches
	untargeted int64 // documents of patches without a target: each walks one object
	growth     cost  // all patches: what they may add to one object
	jsonCopies []jsonCopy
	repl       replacements
	labels     labelPlaces
	largest    cost // the largest document read
	charged    cost
}

// spread is a patch or a replacement of a kustomization.
type spread struct {
	patch    patchInfo
	targeted bool
	noWalk   bool             // copied into set places, without walking the object
	repl     *replacementSpec // a replacement rather than a patch
	meta     *metaSpec        // labels and the like written into fieldSpecs
}

// add counts spreads against the objects read from objs on (read nodes
// having been read by then).
func (f *fanOut) add(spreads []spread, objs, read int64) {
	for _, sp := range spreads {
		switch {
		case sp.repl != nil:
			f.repl.add(sp.repl, objs)
		case sp.meta != nil:
			f.labels.add(sp.meta, objs, read)
		case sp.targeted:
			f.growth = f.growth.plus(sp.patch.cost)
			f.targeted.add(sp.patch.cost, objs, read, !sp.noWalk)
			if sp.patch.copies > 0 {
				f.jsonCopies = append(f.jsonCopies, jsonCopy{ops: sp.patch.copies, from: objs})
			}
		default:
			f.growth = f.growth.plus(sp.patch.cost)
			f.untargeted = satAdd(f.untargeted, sp.patch.docs)
		}
	}
}

// want is what the spreads counted so far may cost once objs objects and
// read nodes have been read.
func (f *fanOut) want(objs, read int64) cost {
	copies := f.targeted.copies(objs)
	w := copies.plus(cost{nodes: f.targeted.walk(read, copies.nodes)})
	w.nodes = satAdd(w.nodes, satMul(f.untargeted, satAdd(f.largest.nodes, f.growth.nodes))/walkRatio)
	for _, c := range f.jsonCopies {
		w = w.plus(c.want(objs, f.largest))
	}
	w = w.plus(f.labels.want(objs, read))
	return w.plus(f.repl.want(objs, read, copies.nodes, f.largest, f.growth))
}

// targetedPatches sums the patches with a target (and a kustomization's
// labels and annotations): each is copied into, and walks, every object
// read since its kustomization was first read.
type targetedPatches struct {
	per, asOf cost // copy costs, and each times the objects read before it
	count     int64
	readAsOf  int64 // nodes read before each
}

func (t *targetedPatches) add(c cost, objs, read int64, walks bool) {
	t.per = t.per.plus(c)
	t.asOf = t.asOf.plus(c.times(objs))
	if walks {
		t.count++
		t.readAsOf = satAdd(t.readAsOf, read)
	}
}

// copies is what the copies of the patches in objs objects cost.
func (t targetedPatches) copies(objs int64) cost {
	c := t.per.times(objs)
	return cost{max(c.nodes-t.asOf.nodes, 0), max(c.bytes-t.asOf.bytes, 0)}
}

// walk is what applying the patches to read nodes of objects, grown by
// their copies, costs in time, in nodes.
func (t targetedPatches) walk(read, grown int64) int64 {
	walked := satMul(t.count, satAdd(read, grown))
	return max(walked-t.readAsOf, 0) / walkRatio
}

// jsonCopy is a JSON patch with a target and copy operations: each copy may
// double the object, up to maxJSONPatchCopy per object.
type jsonCopy struct {
	ops  int
	from int64
}

func (j jsonCopy) want(objs int64, largest cost) cost {
	per := cost{
		nodes: doubled(largest.nodes, j.ops, maxJSONPatchCopy/2), // a JSON node takes two bytes at least
		bytes: doubled(largest.bytes, j.ops, maxJSONPatchCopy),
	}
	return per.times(max(objs-j.from, 0))
}

// doubled is what ops copies, each at most doubling a document of n, may
// add to it, at most limit.
func doubled(n int64, ops int, limit int64) int64 {
	total := n
	for i := 0; i < ops && total-n < limit; i++ {
		total = satAdd(total, total)
	}
	return min(total-n, limit)
}

// settle charges the budgets what the spreads counted so far may cost on
// the objects read so far. It runs after every read kustomize makes, so
// before kustomize applies any of them.
func (b *budget) settle() error {
	f := &b.fan
	want := f.want(b.objs.Load(), b.nodes.Load()-f.charged.nodes)
	if d := want.nodes - f.charged.nodes; d > 0 && b.lim.nodes > 0 {
		if want.nodes > b.lim.nodes {
			return b.exceeded(&LimitError{Limit: LimitNodes, Max: b.lim.nodes})
		}
		f.charged.nodes = want.nodes
		if err := b.readNodes(d); err != nil {
			return err
		}
	}
	if d := want.bytes - f.charged.bytes; d > 0 && b.lim.bytes > 0 {
		if want.bytes > b.lim.bytes {
			return b.exceeded(&LimitError{Limit: LimitBytes, Max: b.lim.bytes})
		}
		f.charged.bytes = want.bytes
		return b.more(d)
	}
	return nil
}

// noteDocuments records the largest document of a file kustomize read, and
// measures the replacements' paths in its objects.
func (f *fanOut) noteDocuments(data []byte) {
	f.largest = f.largest.atLeast(largestDocument(data))
	f.repl.measure(data)
	f.labels.measure(data)
}

// largestDocument is the cost of the largest document of data.
func largestDocument(data []byte) cost {
	var largest cost
	for len(data) > 0 {
		doc := data
		if i := nextSeparator(data); i >= 0 {
			doc, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		largest = largest.atLeast(cost{nodes: readNodes("", doc, false), bytes: int64(len(doc))})
	}
	return largest
}

// nextSeparator is the index of the line break before the next line that
// starts with "---" (kyaml's separator, and a few more), or -1.
func nextSeparator(data []byte) int {
	return bytes.Index(data, []byte("\n---"))
}

func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}
