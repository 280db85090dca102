/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// check_final.go: checkFinal, the checks of the end state: each
// repository's last commit has its sync and rollout verdicts, and every
// live revision its success.

package chaos

import (
	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/status"
	"bggitops.dev/bg-gitops/internal/testing/testenv/gitea"
)

// checkFinal holds the end state to "eventually": each repository's last
// commit has its sync verdict and, for every job, the rollout verdict its
// outcome calls for; every revision a job lists as gone live has its
// success.
func (c *checker) checkFinal(w *world) {
	for _, r := range repos {
		head := c.e.git.head(r.Name)
		if head == nil {
			continue
		}
		byContext := groupByContext(c.statuses[head.SHA].statuses)
		c.checkHeadSync(head, byContext[status.SyncContext(r.Namespace, r.Name)])
		for _, j := range jobsOf(r.Name) {
			key := r.Namespace + "/" + j.Name
			c.checkHeadRollout(head, key, w.fbgds[key], byContext[status.RolloutContext(r.Namespace, j.Name)])
		}
	}
	for key, p := range w.fbgds {
		c.checkLive(key, p)
	}
}

func (c *checker) checkHeadSync(head *Commit, list []gitea.Status) {
	subject := head.Repo
	c.count(invStatusNotLost)
	switch {
	case len(list) == 0:
		c.violate(invStatusNotLost, head.SHA+"|head-sync", subject, "the last commit %s of %s has no sync status", short(head.Revision), head.Repo)
	case list[len(list)-1].State == string(status.StateFailure):
		c.count(invStatusOutcome)
		c.violate(invStatusOutcome, head.SHA+"|head-sync", subject, "the last commit %s of %s, which builds, ends with sync failure %q",
			short(head.Revision), head.Repo, list[len(list)-1].Description)
	}
}

// checkHeadRollout: the last commit reached every job (the apply stamps it
// on each); its verdict is success when the job runs it, failure when the
// job reports its rollout failed.
func (c *checker) checkHeadRollout(head *Commit, key string, p *v1alpha1.FlinkBlueGreenDeployment, list []gitea.Status) {
	subject := key
	c.count(invStatusNotLost)
	if p == nil || p.Annotations[v1alpha1.RevisionAnnotation] != head.Revision {
		c.violate(invStatusNotLost, head.SHA+"|"+key+"|reached", subject, "the last commit %s never reached %s", short(head.Revision), key)
		return
	}
	if len(list) == 0 {
		c.violate(invStatusNotLost, head.SHA+"|"+key+"|head", subject, "the last commit %s has no rollout status for %s", short(head.Revision), key)
		return
	}
	want := ""
	st := p.Status
	switch {
	case st.BlueGreenState.Active() && st.JobStatus.State == v1alpha1.JobRunning && st.ActiveRevision == head.Revision:
		want = string(status.StateSuccess)
	case st.JobStatus.State == v1alpha1.JobFailing && st.TargetRevision == head.Revision:
		want = string(status.StateFailure)
	}
	c.count(invStatusOutcome)
	if last := list[len(list)-1]; want != "" && last.State != want {
		c.violate(invStatusOutcome, head.SHA+"|"+key+"|verdict", subject, "the last commit %s ends with %s %q, but %s is %s/%s at %s",
			short(head.Revision), last.State, last.Description, key, st.BlueGreenState, st.JobStatus.State, short(st.ActiveRevision))
	}
}

// checkLive: every revision in status.liveRevisions went live: its rollout
// status is success, posted once the forge could take it.
func (c *checker) checkLive(key string, p *v1alpha1.FlinkBlueGreenDeployment) {
	ns, name := splitKey(key)
	ctxName := status.RolloutContext(ns, name)
	for _, rev := range p.Status.LiveRevisions {
		commit := c.e.git.byRevision(rev)
		if commit == nil {
			continue
		}
		c.count(invStatusNotLost)
		list := groupByContext(c.statuses[commit.SHA].statuses)[ctxName]
		states := make([]string, len(list))
		for i, s := range list {
			states[i] = s.State
		}
		switch {
		case len(list) == 0:
			c.violate(invStatusNotLost, commit.SHA+"|"+key+"|live", key, "%s went live (status.liveRevisions) but has no rollout status", short(rev))
		case list[len(list)-1].State != string(status.StateSuccess):
			c.count(invStatusOutcome)
			c.violate(invStatusOutcome, commit.SHA+"|"+key+"|live", key, "%s went live (status.liveRevisions) but its statuses are %v",
				short(rev), states)
		}
	}
}
