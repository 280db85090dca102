/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// watch.go: Story.Wait and Story.Watch, which poll the world and print each
// change as a timeline line, recording when a commit reached the cluster.

package devenv

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// pollEvery is how often the story looks at the world; the figures it
// prints are accurate to about this much.
const pollEvery = 100 * time.Millisecond

// marks are the moments of one commit's way to the cluster, as first seen.
type marks struct {
	webhook, applied, rolloutStart, rolloutStatus time.Time
	rolloutState                                  string
}

// watcher polls the world, prints what changed as timeline lines, and
// records the marks of the commit being watched.
type watcher struct {
	env      *Env
	prev     *World
	seen     map[int64]bool
	forgeBad bool
	commit   Commit
	marks    marks
}

// Wait observes the world until cond holds, printing every change on the
// timeline; on timeout it says what it was waiting for and what it saw.
func (s *Story) Wait(ctx context.Context, what string, timeout time.Duration, cond func(*World) bool) (*World, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		w, err := s.w.observe(ctx)
		if err == nil && cond(w) {
			return w, nil
		}
		select {
		case <-ctx.Done():
			if err == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("timed out after %s", timeout)
			}
			if err == nil {
				err = ctx.Err()
			}
			return w, fmt.Errorf("waiting for %s: %w; last seen: %s", what, err, describe(s.w.prev))
		case <-time.After(pollEvery):
		}
	}
}

// watchEvery is how often Watch looks at the world: it follows a
// person's pushes, it measures nothing.
const watchEvery = 500 * time.Millisecond

// Watch prints the timeline until ctx ends: each new commit on main,
// whoever pushed it (a clone of the repository, Gitea's web editor, the
// story), and what it causes in the cluster and on the commit.
func (s *Story) Watch(ctx context.Context) {
	if s.w.commit.SHA == "" {
		s.w.follow(s.seed)
	}
	failed := ""
	for {
		err := s.followHead(ctx)
		if err == nil {
			_, err = s.w.observe(ctx)
		}
		failed = s.reportOnce(ctx, err, failed)
		select {
		case <-ctx.Done():
			return
		case <-time.After(watchEvery):
		}
	}
}

// followHead follows the commit main points at when it is a new one.
func (s *Story) followHead(ctx context.Context) error {
	sha, message, err := s.env.Gitea.BranchHead(ctx, RepoName, "main")
	if err != nil || sha == s.w.commit.SHA {
		return err
	}
	s.Follow(Commit{SHA: sha, Revision: "main@sha1:" + sha, Pushed: time.Now(), Message: firstLine(message)})
	return nil
}

// reportOnce prints an error of Watch unless it is the one printed last
// or ctx ended; it returns the error's text ("" for none).
func (s *Story) reportOnce(ctx context.Context, err error, last string) string {
	if err == nil || ctx.Err() != nil {
		return ""
	}
	if err.Error() != last {
		s.w.logf("cannot look: %v", firstLine(err.Error()))
	}
	return err.Error()
}

// follow starts watching a new commit.
func (w *watcher) follow(c Commit) {
	w.commit = c
	w.marks = marks{}
	w.seen = map[int64]bool{}
}

func (w *watcher) observe(ctx context.Context) (*World, error) {
	cur, err := w.env.Observe(ctx, w.commit.SHA)
	if err != nil {
		return nil, err
	}
	w.diff(w.prev, cur)
	w.prev = cur
	return cur, nil
}

func (w *watcher) logf(format string, args ...any) { w.env.Logf("  "+format, args...) }

// diff prints what changed between two observations and records marks.
func (w *watcher) diff(prev, cur *World) {
	w.diffGit(prev, cur)
	w.diffFBGD(prev, cur)
	w.diffChildren(prev, cur)
	w.diffStatuses(cur)
}

func (w *watcher) diffGit(prev, cur *World) {
	g := cur.Git
	var p = prevGit(prev)
	if a := g.Annotations[v1alpha1.ReconcileRequestedAtAnnotation]; a != "" && a != p.Annotations[v1alpha1.ReconcileRequestedAtAnnotation] {
		w.logf("webhook: gitea delivered the push, the receiver requested a reconcile")
		if w.marks.webhook.IsZero() {
			w.marks.webhook = cur.At
		}
	}
	if rev := artifactRevision(g); rev != "" && rev != artifactRevision(p) {
		w.logf("GitRepository fetched %s", short(rev))
	}
	if rev := g.Status.LastAppliedRevision; rev != "" && rev != p.Status.LastAppliedRevision {
		n := 0
		if g.Status.Inventory != nil {
			n = len(g.Status.Inventory.Entries)
		}
		w.logf("GitRepository applied %s (%d objects, server-side apply)", short(rev), n)
	}
	if rev := g.Status.LastAppliedRevision; rev == w.commit.Revision && w.marks.applied.IsZero() {
		w.marks.applied = cur.At
	}
	for _, typ := range []string{v1alpha1.FetchFailedCondition, v1alpha1.BuildFailedCondition, v1alpha1.ApplyFailedCondition} {
		c := apimeta.FindStatusCondition(g.Status.Conditions, typ)
		if c == nil || c.Status != "True" {
			continue
		}
		if old := apimeta.FindStatusCondition(p.Status.Conditions, typ); old == nil || old.Status != "True" || old.Message != c.Message {
			w.logf("GitRepository %s: %s", typ, c.Message)
		}
	}
}

func (w *watcher) diffFBGD(prev, cur *World) {
	f := cur.FBGD
	if f == nil {
		return
	}
	var p *v1alpha1.FlinkBlueGreenDeployment
	if prev != nil {
		p = prev.FBGD
	}
	if p == nil {
		w.logf("FlinkBlueGreenDeployment %s/%s created", JobNamespace, JobName)
		p = &v1alpha1.FlinkBlueGreenDeployment{}
	}
	st, ps := f.Status, p.Status
	if st.BlueGreenState != ps.BlueGreenState || jobWords(st) != jobWords(ps) {
		if st.BlueGreenState != "" {
			w.logf("%s: %s, %s", JobName, st.BlueGreenState, jobWords(st))
		}
	}
	// The rollout of the watched commit has started once the controller
	// acts on it: it left ACTIVE_*, or (after an abort) it is deleting the
	// leftover colour first.
	if w.marks.rolloutStart.IsZero() && w.commit.Revision != "" && st.TargetRevision == w.commit.Revision &&
		(!Settled(st.BlueGreenState) || st.JobStatus.State == v1alpha1.JobReconciling) {
		w.marks.rolloutStart = cur.At
	}
	if sp := st.Savepoint; sp != nil {
		old := ps.Savepoint
		if old == nil || old.Name != sp.Name {
			w.logf("savepoint requested: FlinkStateSnapshot %s", sp.Name)
		}
		if sp.Path != "" && (old == nil || old.Path != sp.Path) {
			w.logf("savepoint completed: %s", sp.Path)
		}
	}
	if st.Error != "" && st.Error != ps.Error {
		w.logf("%s error: %s", JobName, st.Error)
	}
}

func (w *watcher) diffChildren(prev, cur *World) {
	names := make([]string, 0, len(cur.Children))
	for n := range cur.Children {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := cur.Children[n]
		var old Child
		existed := false
		if prev != nil {
			old, existed = prev.Children[n]
		}
		if !existed {
			from := "fresh start, no savepoint"
			if c.InitialSavepoint != "" {
				from = "from savepoint " + c.InitialSavepoint
			}
			w.logf("FlinkDeployment %s created (%s, %s)", n, c.Image, from)
		}
		if c.Lifecycle != old.Lifecycle || c.JobState != old.JobState {
			if c.Lifecycle != "" || c.JobState != "" {
				w.logf("%s: %s, job %s %s", n, orDash(c.Lifecycle), orDash(c.JobState), shortID(c.JobID))
			}
		}
		if c.Suspended && !old.Suspended {
			w.logf("%s suspended", n)
		}
		if c.Deleting && !old.Deleting {
			w.logf("%s being deleted", n)
		}
	}
	if prev != nil {
		for n := range prev.Children {
			if _, ok := cur.Children[n]; !ok {
				w.logf("FlinkDeployment %s deleted", n)
			}
		}
	}
}

func (w *watcher) diffStatuses(cur *World) {
	if cur.ForgeErr != nil {
		if !w.forgeBad {
			w.logf("gitea unreachable: %v", firstLine(cur.ForgeErr.Error()))
		}
		w.forgeBad = true
		return
	}
	if w.forgeBad {
		w.logf("gitea reachable again")
		w.forgeBad = false
	}
	for _, s := range cur.Statuses {
		if w.seen[s.ID] {
			continue
		}
		w.seen[s.ID] = true
		w.logf("commit %s ← %s: %s (%s)", w.commit.Short(), s.Context, strings.ToUpper(s.State), s.Description)
		if s.Context == RolloutContext && (s.State == "success" || s.State == "failure") && w.marks.rolloutStatus.IsZero() {
			w.marks.rolloutStatus, w.marks.rolloutState = cur.At, s.State
		}
	}
}

func describe(w *World) string {
	if w == nil {
		return "nothing yet"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GitRepository applied %s", short(w.Git.Status.LastAppliedRevision))
	if c := apimeta.FindStatusCondition(w.Git.Status.Conditions, v1alpha1.ReadyCondition); c != nil {
		fmt.Fprintf(&b, " (Ready=%s: %s)", c.Status, c.Message)
	}
	if w.FBGD != nil {
		st := w.FBGD.Status
		fmt.Fprintf(&b, "; %s %s job %s active %s revision %s", JobName, st.BlueGreenState, st.JobStatus.State, st.ActiveDeployment, short(st.ActiveRevision))
		if st.Error != "" {
			fmt.Fprintf(&b, " error %q", st.Error)
		}
	}
	for _, c := range w.Children {
		fmt.Fprintf(&b, "; %s %s/%s suspended=%v", c.Name, c.Lifecycle, c.JobState, c.Suspended)
	}
	for _, s := range w.Statuses {
		fmt.Fprintf(&b, "; status %s=%s", s.Context, s.State)
	}
	if w.ForgeErr != nil {
		fmt.Fprintf(&b, "; gitea: %v", w.ForgeErr)
	}
	return b.String()
}

func prevGit(w *World) *v1alpha1.GitRepository {
	if w == nil || w.Git == nil {
		return &v1alpha1.GitRepository{}
	}
	return w.Git
}

func artifactRevision(g *v1alpha1.GitRepository) string {
	if g.Status.Artifact == nil {
		return ""
	}
	return g.Status.Artifact.Revision
}

// short turns main@sha1:<40 hex> into main@sha1:<7 hex>.
func short(rev string) string {
	if rev == "" {
		return "-"
	}
	if i := strings.LastIndexByte(rev, ':'); i >= 0 {
		return rev[:i+1] + v1alpha1.ShortSHA(rev[i+1:])
	}
	return rev
}

func shortID(id string) string {
	if len(id) > 8 {
		return "(" + id[:8] + ")"
	}
	if id == "" {
		return ""
	}
	return "(" + id + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// jobWords says where the job stands in the words of the JOB column (and
// of bg-gitops get): "job RUNNING", or "rollout FAILED, job RUNNING".
func jobWords(st v1alpha1.FlinkBlueGreenDeploymentStatus) string {
	words := "job " + orDash(st.RunningJobState())
	if st.RolloutFailedJobRunning() {
		return "rollout FAILED, " + words
	}
	return words
}
