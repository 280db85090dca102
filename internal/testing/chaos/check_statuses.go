/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// check_statuses.go: checkStatuses, which reads the statuses of the pushed
// commits from Gitea and checks them per commit and context (checkOnce,
// checkOutcome).

package chaos

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/flinksim"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// statusCache is what Gitea showed of a commit at the last read.
type statusCache struct {
	statuses []gitea.Status
	// settled: every context ended with a verdict when last read, and the
	// commit is old: later passes (but the final one) do not read it again.
	settled bool
}

// settleAge is how old a commit with only verdicts must be before the
// passes during the run stop reading it.
const settleAge = 10 * time.Minute

// checkStatuses reads the commit statuses of the pushed commits and checks
// them; false when Gitea could not be read.
func (c *checker) checkStatuses(ctx context.Context, w *world, final bool) bool {
	var l *flinksim.Lineage
	if lin, err := readJournalFile(c.e.journalPath()); err == nil {
		l = lin
	}
	for _, commit := range c.e.git.pushed() {
		cached := c.statuses[commit.SHA]
		if cached.settled && !final {
			continue
		}
		st, err := c.e.forge.CommitStatuses(ctx, commit.Repo, commit.SHA)
		if err != nil {
			return false
		}
		sort.Slice(st, func(a, b int) bool { return st[a].ID < st[b].ID })
		byContext := groupByContext(st)
		c.statuses[commit.SHA] = statusCache{statuses: st,
			settled: allVerdicts(byContext) && time.Since(commit.Pushed) > settleAge}
		for ctxName, list := range byContext {
			c.checkContext(commit, ctxName, list, l, final)
		}
	}
	if final && w != nil {
		c.checkFinal(w)
	}
	return true
}

func groupByContext(st []gitea.Status) map[string][]gitea.Status {
	out := map[string][]gitea.Status{}
	for _, s := range st {
		out[s.Context] = append(out[s.Context], s)
	}
	return out
}

func allVerdicts(byContext map[string][]gitea.Status) bool {
	for _, list := range byContext {
		if list[len(list)-1].State == string(status.StatePending) {
			return false
		}
	}
	return true
}

// checkContext checks the statuses of one commit and context, oldest first.
func (c *checker) checkContext(commit *Commit, ctxName string, list []gitea.Status, l *flinksim.Lineage, final bool) {
	key := commit.SHA + "|" + ctxName
	job, isRollout := c.contextJob(commit, ctxName)
	subjects := []string{commit.Repo}
	if job != "" {
		subjects = []string{repoOf(commit.Repo).Namespace + "/" + job, commit.Repo}
	}
	c.count(invStatusCommit)
	switch {
	case !isRollout && ctxName != status.SyncContext(repoOf(commit.Repo).Namespace, commit.Repo):
		c.violateAt(invStatusCommit, key, subjects, list[0].Created, "status of context %s on %s, a commit of %s", ctxName, short(commit.Revision), commit.Repo)
	case isRollout && job == "":
		c.violateAt(invStatusCommit, key, subjects, list[0].Created, "status of context %s on %s, a commit of %s, which has no such job", ctxName, short(commit.Revision), commit.Repo)
	case isRollout && commit.Broken:
		c.violateAt(invStatusCommit, key, subjects, list[0].Created, "rollout status %s %q on %s, whose kustomization does not build",
			list[0].State, list[0].Description, short(commit.Revision))
	}
	c.checkOnce(commit, key, subjects, ctxName, list, isRollout)
	c.checkOutcome(commit, key, subjects, job, list, l, isRollout)
	if final {
		c.count(invStatusNotLost)
		if last := list[len(list)-1]; last.State == string(status.StatePending) {
			which := "the last commit"
			if head := c.e.git.head(commit.Repo); head != nil && head.SHA != commit.SHA {
				which = "an earlier commit"
			}
			c.violateAt(invStatusNotLost, key, subjects, last.Created, "%s left pending on %s, %s (pushed at %s: %s); its statuses: %s",
				ctxName, short(commit.Revision), which, c.tl.since(commit.Pushed), commit.describe(), c.describeStatuses(list))
		}
	}
}

// contextJob is the job a rollout context names, "" when the commit's
// repository has no such job; isRollout is false for other contexts.
func (c *checker) contextJob(commit *Commit, ctxName string) (string, bool) {
	rest, ok := strings.CutPrefix(ctxName, "bg-gitops/rollout/")
	if !ok {
		return "", false
	}
	for _, j := range jobsOf(commit.Repo) {
		if rest == repoOf(commit.Repo).Namespace+"/"+j.Name {
			return j.Name, true
		}
	}
	return "", true
}

// checkOnce: no status repeats the one before it, no rollout status
// follows a success, at most 7 pending.
func (c *checker) checkOnce(commit *Commit, key string, subjects []string, ctxName string, list []gitea.Status, isRollout bool) {
	c.count(invStatusOnce)
	c.count(invStatusBound)
	pending := 0
	for i, s := range list {
		if s.State == string(status.StatePending) {
			pending++
		}
		if i == 0 {
			continue
		}
		prev := list[i-1]
		switch {
		case prev.State == s.State && prev.Description == s.Description:
			c.violateAt(invStatusOnce, key+"|twice", subjects, s.Created, "%s posted twice on %s: %s %q (ids %d at %s, %d at %s)",
				ctxName, short(commit.Revision), s.State, s.Description, prev.ID, c.tl.since(prev.Created), s.ID, c.tl.since(s.Created))
		case isRollout && prev.State == string(status.StateSuccess):
			c.violateAt(invStatusOnce, key+"|after", subjects, s.Created, "%s on %s: %s %q (at %s) after success %q (at %s)",
				ctxName, short(commit.Revision), s.State, s.Description, c.tl.since(s.Created), prev.Description, c.tl.since(prev.Created))
		}
	}
	if pending > 7 {
		c.violateAt(invStatusBound, key, subjects, list[len(list)-1].Created, "%s on %s: %d pending statuses", ctxName, short(commit.Revision), pending)
	}
}

var restoredFrom = regexp.MustCompile(`restored from savepoint (\S+)`)

// checkOutcome: a commit whose kustomization does not build never gets a
// sync success; a success that names a savepoint names one the lineage
// has, taken of the same job.
func (c *checker) checkOutcome(commit *Commit, key string, subjects []string, job string, list []gitea.Status, l *flinksim.Lineage, isRollout bool) {
	c.count(invStatusOutcome)
	for _, s := range list {
		if !isRollout && commit.Broken && s.State == string(status.StateSuccess) {
			c.violateAt(invStatusOutcome, key+"|broken", subjects, s.Created, "sync success %q on %s, whose kustomization does not build", s.Description, short(commit.Revision))
		}
		m := restoredFrom.FindStringSubmatch(s.Description)
		if !isRollout || m == nil || l == nil || job == "" {
			continue
		}
		path := strings.TrimRight(m[1], ".,;")
		sp, ok := l.Savepoint(path)
		if !ok {
			c.violateAt(invStatusOutcome, key+"|sp", subjects, s.Created, "%q on %s names a savepoint no job wrote", s.Description, short(commit.Revision))
			continue
		}
		src, _ := l.Job(sp.JobID)
		if _, child := splitKey(src.Deployment); jobOfChild(child) != job {
			c.violateAt(invStatusOutcome, key+"|sp", subjects, s.Created, "%q on %s names a savepoint of %s", s.Description, short(commit.Revision), src.Deployment)
		}
	}
}

// describeStatuses lists statuses as state "description" (time).
func (c *checker) describeStatuses(list []gitea.Status) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = fmt.Sprintf("%s %q (%s)", s.State, s.Description, c.tl.since(s.Created))
	}
	return strings.Join(parts, ", ")
}
