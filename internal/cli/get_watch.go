/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops get fbgd NAME --watch`: reads the objects of the tree and draws it
// again on every change the API server's watches report (on a terminal), or
// prints a line for each change (get_watch_lines.go).

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/scheme"
)

// fbgdGetter reads one FlinkBlueGreenDeployment and prints it: once, or on
// every change (--watch).
type fbgdGetter struct {
	key         types.NamespacedName
	reader      client.Reader
	out, errOut io.Writer
	// printer is the -o printer; nil for the tree.
	printer  printers.ResourcePrinter
	terminal bool
}

func (g *fbgdGetter) once(ctx context.Context) error {
	if g.printer != nil {
		p, err := readParent(ctx, g.reader, g.key)
		if err != nil {
			return err
		}
		return printObject(g.printer, p, g.out)
	}
	v, err := readFBGDView(ctx, g.reader, g.key)
	if err != nil {
		return err
	}
	_, err = io.WriteString(g.out, renderFBGD(v, time.Now()))
	return err
}

func readParent(ctx context.Context, c client.Reader, key types.NamespacedName) (*v1alpha1.FlinkBlueGreenDeployment, error) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := c.Get(ctx, key, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound(fbgdKind.short, key)
		}
		return nil, fmt.Errorf("read %s %s: %w", fbgdKind.short, key, err)
	}
	return p, nil
}

// readFBGDView reads the parent, the FlinkDeployments it owns, the
// FlinkStateSnapshot of its savepoint and its last events. What the
// caller may not read (the Flink CRDs missing, events forbidden) is left
// out rather than failing the command.
func readFBGDView(ctx context.Context, c client.Reader, key types.NamespacedName) (fbgdView, error) {
	p, err := readParent(ctx, c, key)
	if err != nil {
		return fbgdView{}, err
	}
	v := fbgdView{Parent: p}
	children := &unstructured.UnstructuredList{}
	children.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK.GroupVersion().WithKind(v1alpha1.FlinkDeploymentGVK.Kind + "List"))
	switch err := c.List(ctx, children, client.InNamespace(key.Namespace), client.HasLabels{bluegreen.TypeLabel}); {
	case err == nil:
		for i := range children.Items {
			if ownedBy(&children.Items[i], p.UID) {
				v.Children = append(v.Children, &children.Items[i])
			}
		}
		sort.Slice(v.Children, func(i, j int) bool { return v.Children[i].GetName() < v.Children[j].GetName() })
	case !unreadable(err):
		return fbgdView{}, fmt.Errorf("list FlinkDeployments of %s %s: %w", fbgdKind.short, key, err)
	}
	if sp := p.Status.Savepoint; sp != nil && sp.Name != "" {
		snap := &unstructured.Unstructured{}
		snap.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
		switch err := c.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: sp.Name}, snap); {
		case err == nil:
			v.Snapshot = snap
		case !unreadable(err) && !apierrors.IsNotFound(err):
			return fbgdView{}, fmt.Errorf("read FlinkStateSnapshot %s/%s: %w", key.Namespace, sp.Name, err)
		}
	}
	events := &corev1.EventList{}
	switch err := c.List(ctx, events, client.InNamespace(key.Namespace), eventsOf(key.Name)); {
	case err == nil:
		var mine []corev1.Event
		for _, e := range events.Items {
			// An event of an earlier object of the same name is not this one's.
			if e.InvolvedObject.UID == "" || e.InvolvedObject.UID == p.UID {
				mine = append(mine, e)
			}
		}
		v.Events = treeLastEvents(mine, maxTreeEvents)
	case !unreadable(err):
		return fbgdView{}, fmt.Errorf("list events of %s %s: %w", fbgdKind.short, key, err)
	}
	return v, nil
}

// eventsOf selects the events whose involved object is the
// FlinkBlueGreenDeployment name.
func eventsOf(name string) client.MatchingFields {
	return client.MatchingFields{"involvedObject.kind": v1alpha1.FlinkBlueGreenDeploymentKind, "involvedObject.name": name}
}

func ownedBy(obj client.Object, uid types.UID) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// unreadable: the kind is not served (no Flink CRDs) or the caller may not
// read it.
func unreadable(err error) bool {
	return apimeta.IsNoMatchError(err) || apierrors.IsForbidden(err)
}

// watchSource is one watch --watch keeps open.
type watchSource struct {
	newList func() client.ObjectList
	opts    []client.ListOption
	// mine, when set, skips the events of objects that are not the
	// parent's (the API server cannot select by owner).
	mine func(client.Object) bool
}

func (g *fbgdGetter) sources() []watchSource {
	ns := client.InNamespace(g.key.Namespace)
	unstructuredList := func(kind string) func() client.ObjectList {
		return func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK.GroupVersion().WithKind(kind + "List"))
			return l
		}
	}
	parent := watchSource{newList: func() client.ObjectList { return &v1alpha1.FlinkBlueGreenDeploymentList{} },
		opts: []client.ListOption{ns, client.MatchingFields{"metadata.name": g.key.Name}}}
	if g.printer != nil {
		return []watchSource{parent}
	}
	return []watchSource{
		parent,
		{newList: unstructuredList(v1alpha1.FlinkDeploymentGVK.Kind),
			opts: []client.ListOption{ns, client.HasLabels{bluegreen.TypeLabel}}, mine: g.ownedByParent},
		{newList: unstructuredList(v1alpha1.FlinkStateSnapshotGVK.Kind),
			opts: []client.ListOption{ns}, mine: g.ownedByParent},
		{newList: func() client.ObjectList { return &corev1.EventList{} },
			opts: []client.ListOption{ns, eventsOf(g.key.Name)}},
	}
}

// ownedByParent: obj is owned by a FlinkBlueGreenDeployment of the name
// followed (by name, not UID: the parent may be deleted and created again
// while --watch runs).
func (g *fbgdGetter) ownedByParent(obj client.Object) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.Kind == v1alpha1.FlinkBlueGreenDeploymentKind && o.Name == g.key.Name {
			return true
		}
	}
	return false
}

// watchRetry is how long a watch that could not start waits before the
// next try.
const watchRetry = time.Second

// follow keeps a watch of src open until ctx ends and calls changed on
// every event. A watch that ends (server timeout, resourceVersion too old,
// a dropped connection) is started again; the new one opens with the
// current objects, so changes missed in between are seen.
func follow(ctx context.Context, wc client.WithWatch, src watchSource, changed func()) {
	for ctx.Err() == nil {
		w, err := wc.Watch(ctx, src.newList(), src.opts...)
		if err != nil {
			if unreadable(err) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(watchRetry):
			}
			continue
		}
		changed()
		started := time.Now()
		func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok || ev.Type == watch.Error {
						return
					}
					if obj, isObj := ev.Object.(client.Object); src.mine == nil || isObj && src.mine(obj) {
						changed()
					}
				}
			}
		}()
		// A watch the server ends at once, again and again, must not
		// become a hot loop.
		if wait := watchRetry - time.Since(started); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// clearScreen moves the cursor home and clears the terminal.
const clearScreen = "\x1b[H\x1b[2J"

// watch draws the tree (or prints the object with -o), then re-reads and
// draws again on every change of the parent, its children, its snapshots
// and its events, until ctx ends or Ctrl-C. On a terminal the screen is
// redrawn (and relative times tick every second, from the last read);
// elsewhere a timestamped line is printed when where the object stands
// changed, and one for each new Warning event (drawLines); with -o the
// object is printed again when it changed.
func (g *fbgdGetter) watch(parent context.Context, cfg *rest.Config) error {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	g.reader = wc
	// The first read fails the command as a plain get would (not found,
	// forbidden); later failures are shown and retried.
	d := &drawer{g: g}
	if err := d.read(ctx); err != nil {
		return err
	}
	if err := d.draw(); err != nil {
		return err
	}

	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	watchCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for _, src := range g.sources() {
		wg.Add(1)
		go func() { defer wg.Done(); follow(watchCtx, wc, src, notify) }()
	}
	var tick <-chan time.Time
	if g.terminal && g.printer == nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	return d.loop(ctx, changed, tick)
}

// loop redraws on every tick (relative times), and reads and draws again
// on every change, until ctx ends; a failed read is said once and tried
// again after watchRetry.
func (d *drawer) loop(ctx context.Context, changed <-chan struct{}, tick <-chan time.Time) error {
	var retry <-chan time.Time
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			if err := d.draw(); err != nil {
				return err
			}
			continue
		case <-changed:
		case <-retry:
		}
		retry = nil
		if err := d.read(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// Said once, not at every retry.
			if err.Error() != lastErr {
				fmt.Fprintln(d.g.errOut, "error:", err)
				lastErr = err.Error()
			}
			retry = time.After(watchRetry)
			continue
		}
		lastErr = ""
		if err := d.draw(); err != nil {
			return err
		}
	}
}

// drawer holds the last read of --watch and what it last printed.
type drawer struct {
	g *fbgdGetter
	// view is the last read; missing is set instead when the parent is
	// gone (it may come back: the watch goes on).
	view    fbgdView
	parent  *v1alpha1.FlinkBlueGreenDeployment
	missing error
	last    string
	printed bool
	// lines prints the lines of a watch without a terminal; seenEvents
	// are the events already read, whose Warnings were said.
	lines      *progress
	seenEvents map[string]bool
	// now is the clock of those lines; nil is time.Now.
	now func() time.Time
}

// read replaces the last read; after a failed read the last one stays.
func (d *drawer) read(ctx context.Context) error {
	var err error
	if d.g.printer != nil {
		var p *v1alpha1.FlinkBlueGreenDeployment
		if p, err = readParent(ctx, d.g.reader, d.g.key); err == nil {
			d.parent = p
		}
	} else {
		var v fbgdView
		if v, err = readFBGDView(ctx, d.g.reader, d.g.key); err == nil {
			d.view = v
		}
	}
	var nf *notFoundError
	if errors.As(err, &nf) && d.printed {
		d.missing = err
		return nil
	}
	if err == nil {
		d.missing = nil
	}
	return err
}

// draw prints the last read: the tree on a terminal (the screen cleared
// first), lines elsewhere (drawLines), or with -o the object when it
// changed.
func (d *drawer) draw() error {
	switch {
	case d.g.printer == nil && d.g.terminal:
		text := renderFBGD(d.view, time.Now())
		if d.missing != nil {
			text = d.missing.Error() + "\n"
		}
		d.printed = true
		_, err := io.WriteString(d.g.out, clearScreen+text)
		return err
	case d.g.printer == nil:
		d.drawLines()
		return nil
	}
	var text, key string
	if d.missing != nil {
		text = d.missing.Error() + "\n"
		key = text
	} else {
		var buf bytes.Buffer
		if err := printObject(d.g.printer, d.parent, &buf); err != nil {
			return err
		}
		text, key = buf.String(), d.parent.ResourceVersion
	}
	if key == d.last {
		return nil
	}
	d.last, d.printed = key, true
	_, err := io.WriteString(d.g.out, text)
	return err
}

// drawLines prints, without a terminal, a timestamped line when where the
// object stands changed (watchLine), and one for each new Warning event.
// The events of the first read happened before the watch: they are not
// changes.
func (d *drawer) drawLines() {
	if d.lines == nil {
		clock := d.now
		if clock == nil {
			clock = time.Now
		}
		d.lines = &progress{out: d.g.out, now: clock, last: map[string]string{}}
		d.seenEvents = map[string]bool{}
	}
	const state = "state"
	if d.missing != nil {
		d.lines.report(state, d.missing.Error())
		d.printed = true
		return
	}
	d.lines.report(state, watchLine(d.view))
	for _, e := range d.view.Events {
		k := eventKey(e)
		if d.seenEvents[k] {
			continue
		}
		d.seenEvents[k] = true
		if d.printed && e.Type == corev1.EventTypeWarning {
			d.lines.report(k, watchWarning(objectID(fbgdKind.short, d.view.Parent), e))
		}
	}
	d.printed = true
}
