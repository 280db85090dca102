/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The tree `bg-gitops get fbgd NAME` prints: the object, its FlinkDeployments and
// savepoints, its deadlines and its last events.

package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// fbgdView is what `bg-gitops get fbgd NAME` shows: one read of the parent
// and of the objects around it. renderFBGD turns it into text without any
// I/O, so the tree is golden-tested without a cluster.
type fbgdView struct {
	Parent *v1alpha1.FlinkBlueGreenDeployment
	// Children are the FlinkDeployments the parent owns.
	Children []*unstructured.Unstructured
	// Snapshot is the FlinkStateSnapshot named in status.savepoint; nil
	// when there is none or it cannot be read.
	Snapshot *unstructured.Unstructured
	// Events are the parent's last events, oldest first.
	Events []corev1.Event
}

// maxTreeEvents is how many of the parent's events the tree shows.
const maxTreeEvents = 5

// renderFBGD renders the tree of v at now. A zero now leaves out every
// time relative to now (ages, "in 4m"), so that two renderings of the
// same objects are equal.
func renderFBGD(v fbgdView, now time.Time) string {
	var b strings.Builder
	p, st := v.Parent, v.Parent.Status
	revs := newRevisionShortener(treeRevisions(v)...)
	field := func(label, value string) { fmt.Fprintf(&b, "%-13s %s\n", label+":", value) }

	field("Name", p.Name)
	field("Namespace", p.Namespace)
	state := orNone(string(st.BlueGreenState))
	if st.ObservedGeneration < p.Generation {
		state += fmt.Sprintf(" (generation %d not yet observed, status is of %d)", p.Generation, st.ObservedGeneration)
	}
	field("State", state)
	if c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition); c != nil {
		field("Ready", treeClean(fmt.Sprintf("%s, %s: %s", c.Status, c.Reason, c.Message)))
	} else {
		field("Ready", "-")
	}
	field("Job", fbgdJobSummary(p, revs.short))
	for _, colour := range []bluegreen.Color{bluegreen.Blue, bluegreen.Green} {
		if line := treeColourLine(v, colour, revs); line != "" {
			field(colourLabel(colour), line)
		}
	}
	if treeTargetChild(p) == "" && st.TargetRevision != "" && st.TargetRevision != st.ActiveRevision {
		field("Target", fmt.Sprintf("revision %s, not rolled out", revs.short(st.TargetRevision)))
	}
	spec := p.Spec.Template.Spec
	field("Spec image", orNone(spec.Image))
	if spec.Job != nil && spec.Job.Parallelism != nil {
		field("Parallelism", fmt.Sprint(*spec.Job.Parallelism))
	}
	if st.Savepoint != nil {
		field("Savepoint", treeSavepointLine(st.Savepoint, v.Snapshot, now))
	}
	for i, d := range treeDeadlines(v, now) {
		label := "Deadlines:"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(&b, "%-13s %s\n", label, d)
	}
	if ready := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition); st.Error != "" &&
		(ready == nil || !strings.Contains(ready.Message, st.Error)) {
		field("Error", treeClean(st.Error))
	}
	treeObjects(&b, v, revs, now)
	treeEvents(&b, v.Events, now)
	return trimLines(b.String())
}

// treeColourLine is one colour's FlinkDeployment: its part in the
// rollout (active, target), its job's state as the Flink operator reports
// it, and the revision and image it runs or rolls out. A colour the status
// names but that is not read (not created yet, the Flink CRDs not
// readable) shows what the status says; a colour neither named nor read
// has no line.
func treeColourLine(v fbgdView, colour bluegreen.Color, revs *revisionShortener) string {
	p, st := v.Parent, v.Parent.Status
	name := bluegreen.ChildName(p.Name, colour)
	c := childNamed(v, name)
	parts := []string{name}
	verb, rev := "revision", ""
	switch name {
	case st.ActiveDeployment:
		parts = append(parts, "active")
		verb, rev = "runs", st.ActiveRevision
	case treeTargetChild(p):
		parts = append(parts, "target")
		verb, rev = "rolls out", st.TargetRevision
	default:
		if c == nil {
			return ""
		}
	}
	if c == nil {
		return strings.Join(append(parts, "not created", verb+" "+revs.short(rev)), ", ")
	}
	if c.GetDeletionTimestamp() != nil {
		parts = append(parts, "deleting")
	}
	if treeString(c, "spec", "job", "state") == v1alpha1.JobStateSuspended {
		parts = append(parts, "suspended")
	}
	parts = append(parts, "job "+orNone(treeClean(treeString(c, "status", "jobStatus", "state"))))
	// What the child carries is what it runs, whatever the status says.
	if r := c.GetAnnotations()[v1alpha1.RevisionAnnotation]; r != "" {
		rev = r
	}
	parts = append(parts, verb+" "+revs.short(rev))
	if image := treeString(c, "spec", "image"); image != "" {
		parts = append(parts, "image "+treeClean(image))
	}
	return strings.Join(parts, ", ")
}

// childNamed is the child FlinkDeployment of v called name; nil when it
// is not read.
func childNamed(v fbgdView, name string) *unstructured.Unstructured {
	for _, c := range v.Children {
		if c.GetName() == name {
			return c
		}
	}
	return nil
}

// colourLabel is "Blue" or "Green".
func colourLabel(c bluegreen.Color) string {
	s := strings.ToLower(string(c))
	return strings.ToUpper(s[:1]) + s[1:]
}

// trimLines drops the blanks tabwriter pads an empty last cell with.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// targetChild names the child a rollout in progress deploys: the other
// colour while savepointing the active one, the colour named by the state
// while transitioning or initializing.
func treeTargetChild(p *v1alpha1.FlinkBlueGreenDeployment) string {
	switch p.Status.BlueGreenState {
	case v1alpha1.SavepointingBlue, v1alpha1.TransitioningToGreen:
		return bluegreen.ChildName(p.Name, bluegreen.Green)
	case v1alpha1.SavepointingGreen, v1alpha1.TransitioningToBlue, v1alpha1.InitializingBlue:
		return bluegreen.ChildName(p.Name, bluegreen.Blue)
	}
	return ""
}

// savepointLine: name, state, path and how long the savepoint took, from
// its trigger to the snapshot's result, or since the trigger while it runs
// or when the snapshot cannot be read.
func treeSavepointLine(sp *v1alpha1.SavepointStatus, snap *unstructured.Unstructured, now time.Time) string {
	parts := []string{sp.Name}
	state, path, errMsg := "", sp.Path, ""
	var started, ended time.Time
	if sp.TriggerTimestamp != nil {
		started = sp.TriggerTimestamp.Time
	}
	if snap != nil {
		state = treeString(snap, "status", "state")
		if p := treeString(snap, "status", "path"); path == "" {
			path = p
		}
		errMsg = treeString(snap, "status", "error")
		// The snapshot's own trigger time is the precise one: the
		// parent's is rounded up to the second.
		if t, ok := treeTime(snap, "status", "triggerTimestamp"); ok {
			started = t
		}
		if t, ok := treeTime(snap, "status", "resultTimestamp"); ok {
			ended = t
		}
	}
	if state != "" {
		parts[0] += " " + state
	}
	if path != "" {
		parts = append(parts, treeClean(path))
	}
	switch {
	case started.IsZero():
	case !ended.IsZero():
		parts = append(parts, "took "+treeTook(ended.Sub(started)))
	case !now.IsZero():
		parts = append(parts, "triggered "+treeAgo(now, started))
	}
	if errMsg != "" {
		parts = append(parts, "error: "+treeClean(errMsg))
	}
	return strings.Join(parts, ", ")
}

// deadlines are the instants the status says something will happen: the
// abort deadline, and while the new colour is ready and waits for the
// deletion delay, when the old colour is deleted (the instant the
// controller computes: deploymentReadyTimestamp plus the spec's deletion
// delay).
func treeDeadlines(v fbgdView, now time.Time) []string {
	p, st := v.Parent, v.Parent.Status
	var out []string
	ready := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition)
	waitingForPromotion := ready != nil && ready.Reason == "WaitingForPromotion"
	// A ready colour waiting for a person to promote it is never aborted
	// at the deadline: it is no deadline.
	if st.AbortTimestamp != nil && !waitingForPromotion {
		out = append(out, "aborts at "+treeStamp(st.AbortTimestamp.Time)+treeIn(now, st.AbortTimestamp.Time))
	}
	target := treeTargetChild(p)
	if !st.BlueGreenState.Transitioning() || st.DeploymentReadyTimestamp == nil || target == st.ActiveDeployment || waitingForPromotion {
		return out
	}
	delay, err := treeDeletionDelay(p)
	if err != nil {
		return out
	}
	old := st.ActiveDeployment
	if old == "" {
		return out
	}
	at := st.DeploymentReadyTimestamp.Add(delay)
	out = append(out, "deletes "+old+" at "+treeStamp(at)+treeIn(now, at))
	return out
}

// deletionDelay is the spec's deployment deletion delay; unset is 0, as in
// FLIP-503.
func treeDeletionDelay(p *v1alpha1.FlinkBlueGreenDeployment) (time.Duration, error) {
	s, ok := p.Spec.Configuration[v1alpha1.DeploymentDeletionDelayKey]
	if !ok {
		return 0, nil
	}
	return bluegreen.ParseFlinkDuration(s)
}

// renderObjects is the tree of the parent and the objects it owns.
func treeObjects(w io.Writer, v fbgdView, revs *revisionShortener, now time.Time) {
	p := v.Parent
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "NAME\tKIND\tSTATUS\tREVISION\tAGE\tINFO")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, v1alpha1.FlinkBlueGreenDeploymentKind,
		orNone(string(p.Status.BlueGreenState)), revs.short(p.Annotations[v1alpha1.RevisionAnnotation]),
		treeAge(now, p.CreationTimestamp.Time), "")
	type row struct{ name, kind, status, rev, age, info string }
	var rows []row
	target := treeTargetChild(p)
	for _, c := range v.Children {
		var info []string
		switch c.GetName() {
		case p.Status.ActiveDeployment:
			info = append(info, "active")
		case target:
			info = append(info, "target")
		}
		if c.GetDeletionTimestamp() != nil {
			info = append(info, "deleting")
		}
		if treeString(c, "spec", "job", "state") == v1alpha1.JobStateSuspended {
			info = append(info, "suspended")
		}
		if id := treeString(c, "status", "jobStatus", "jobId"); id != "" {
			info = append(info, "job "+treeClean(id))
		}
		rows = append(rows, row{c.GetName(), "FlinkDeployment", treeChildStatus(c),
			revs.short(c.GetAnnotations()[v1alpha1.RevisionAnnotation]), treeAge(now, c.GetCreationTimestamp().Time),
			strings.Join(info, ", ")})
	}
	if s := v.Snapshot; s != nil {
		var info string
		if e := treeString(s, "status", "error"); e != "" {
			info = "error: " + treeClean(e)
		}
		rows = append(rows, row{s.GetName(), "FlinkStateSnapshot", orNone(treeString(s, "status", "state")), "-",
			treeAge(now, s.GetCreationTimestamp().Time), info})
	}
	for i, r := range rows {
		branch := "├──"
		if i == len(rows)-1 {
			branch = "└──"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\n", branch, r.name, r.kind, r.status, r.rev, r.age, r.info)
	}
	_ = tw.Flush()
}

// childStatus is "<lifecycle>/<job state>" as the Flink operator reports
// them.
func treeChildStatus(c *unstructured.Unstructured) string {
	return orNone(treeString(c, "status", "lifecycleState")) + "/" + orNone(treeString(c, "status", "jobStatus", "state"))
}

func treeEvents(w io.Writer, events []corev1.Event, now time.Time) {
	if len(events) == 0 {
		fmt.Fprintln(w, "Events:       <none>")
		return
	}
	fmt.Fprintln(w, "Events:")
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "  AGE\tTYPE\tREASON\tMESSAGE")
	for _, e := range events {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", treeAge(now, treeEventTime(e)), treeClean(e.Type), treeClean(e.Reason), treeClean(e.Message))
	}
	_ = tw.Flush()
}

// eventTime is when an event last happened, whichever API wrote it
// (events.k8s.io/v1 events read as core/v1 have an eventTime and maybe a
// series, core/v1 ones a lastTimestamp).
func treeEventTime(e corev1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.FirstTimestamp.Time, e.LastTimestamp.Time, e.EventTime.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}

// lastEvents sorts events oldest first and keeps the newest max.
func treeLastEvents(events []corev1.Event, max int) []corev1.Event {
	sort.SliceStable(events, func(i, j int) bool {
		ti, tj := treeEventTime(events[i]), treeEventTime(events[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return events[i].Name < events[j].Name
	})
	if len(events) > max {
		events = events[len(events)-max:]
	}
	return events
}

// viewRevisions are the revisions the tree shows.
func treeRevisions(v fbgdView) []string {
	revs := []string{v.Parent.Status.ActiveRevision, v.Parent.Status.TargetRevision,
		v.Parent.Annotations[v1alpha1.RevisionAnnotation]}
	for _, c := range v.Children {
		revs = append(revs, c.GetAnnotations()[v1alpha1.RevisionAnnotation])
	}
	return revs
}

// minShortSHA is git's minimum abbreviation.
const minShortSHA = 7

// revisionShortener abbreviates the commits of revisions as git does: at
// least 7 hex digits, more while two of the commits shown would read the
// same. The full revision stays in -o json|yaml.
type revisionShortener struct{ length int }

func newRevisionShortener(revs ...string) *revisionShortener {
	var shas []string
	for _, r := range revs {
		if _, sha, err := v1alpha1.ParseRevision(r); err == nil {
			shas = append(shas, sha)
		}
	}
	sort.Strings(shas)
	n := minShortSHA
	for i := 1; i < len(shas); i++ {
		a, b := shas[i-1], shas[i]
		if a == b {
			continue
		}
		common := 0
		for common < len(a) && common < len(b) && a[common] == b[common] {
			common++
		}
		n = max(n, common+1)
	}
	return &revisionShortener{length: n}
}

// short is rev as <ref>@<abbreviated commit>; a revision that does not
// parse is shown as it is.
func (s *revisionShortener) short(rev string) string {
	ref, sha, err := v1alpha1.ParseRevision(rev)
	if err != nil {
		return orNone(treeClean(rev))
	}
	if len(sha) > s.length {
		sha = sha[:s.length]
	}
	if ref == "" {
		return sha
	}
	return treeClean(ref) + "@" + sha
}

// clean makes a string from the cluster safe to print on one line of a
// terminal.
func treeClean(s string) string {
	return printers.EscapeTerminal(strings.NewReplacer("\n", " ", "\t", " ").Replace(s))
}

func treeString(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func treeTime(u *unstructured.Unstructured, path ...string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, treeString(u, path...))
	return t, err == nil
}

// stamp is an absolute instant as the conditions write it.
func treeStamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// in is " (in 4m)" or " (20s ago)"; empty without now.
func treeIn(now, t time.Time) string {
	if now.IsZero() {
		return ""
	}
	if d := t.Sub(now); d >= 0 {
		return " (in " + duration.HumanDuration(d) + ")"
	}
	return " (" + duration.HumanDuration(now.Sub(t)) + " ago)"
}

func treeAgo(now, t time.Time) string {
	if now.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t)) + " ago"
}

// age is kubectl's AGE column; empty without now or a time.
func treeAge(now, t time.Time) string {
	if now.IsZero() || t.IsZero() {
		return ""
	}
	return duration.HumanDuration(now.Sub(t))
}

// tookDuration shows sub-minute durations to a tenth of a second:
// savepoints are often that quick.
func treeTook(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return duration.HumanDuration(d)
}
