/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// The kinds the verbs and wait act on (GitRepository, FlinkBlueGreenDeployment):
// their names, and where an object stands.

package cli

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// kind is a kind the request verbs act on.
type kind struct {
	name    string
	aliases []string
	// short names the kind in output lines.
	short     string
	newObject func() client.Object
	// newList returns an empty list of the kind; names lists its items.
	newList func() client.ObjectList
	names   func(client.ObjectList) []string
	// standing says where an object stands.
	standing func(obj client.Object) standing
}

// standing is where an object stands for --wait.
type standing struct {
	// line is the one-line summary ("fbgd ns/x: ACTIVE_GREEN, job RUNNING, ...").
	line string
	// settled: the controller has nothing left to do for now.
	settled bool
	// failed: settled in a failure; message says why.
	failed  bool
	message string
	// active: a colour is active (ACTIVE_BLUE or ACTIVE_GREEN).
	active bool
}

var gitRepositoryKind = &kind{
	name: "gitrepository", aliases: []string{"gitrepositories", "bggr"}, short: "gitrepository",
	newObject: func() client.Object { return &v1alpha1.GitRepository{} },
	newList:   func() client.ObjectList { return &v1alpha1.GitRepositoryList{} },
	names: func(l client.ObjectList) []string {
		var names []string
		for _, o := range l.(*v1alpha1.GitRepositoryList).Items {
			names = append(names, o.Name)
		}
		return names
	},
	standing: func(obj client.Object) standing { return gitRepositoryStanding(obj.(*v1alpha1.GitRepository)) },
}

var fbgdKind = &kind{
	name: "fbgd", aliases: []string{"fbgds", "flinkbluegreendeployment", "flinkbluegreendeployments"}, short: "fbgd",
	newObject: func() client.Object { return &v1alpha1.FlinkBlueGreenDeployment{} },
	newList:   func() client.ObjectList { return &v1alpha1.FlinkBlueGreenDeploymentList{} },
	names: func(l client.ObjectList) []string {
		var names []string
		for _, o := range l.(*v1alpha1.FlinkBlueGreenDeploymentList).Items {
			names = append(names, o.Name)
		}
		return names
	},
	standing: func(obj client.Object) standing { return fbgdStanding(obj.(*v1alpha1.FlinkBlueGreenDeployment)) },
}

func objectID(short string, obj client.Object) string {
	return fmt.Sprintf("%s %s/%s", short, obj.GetNamespace(), obj.GetName())
}

// gitRepositoryStanding: settled once Ready is True or False for the
// current generation; Stalled is a failure too.
func gitRepositoryStanding(gr *v1alpha1.GitRepository) standing {
	id := objectID("gitrepository", gr)
	conds := gr.Status.Conditions
	if s := apimeta.FindStatusCondition(conds, v1alpha1.StalledCondition); s != nil && s.Status == "True" {
		msg := s.Reason + ": " + s.Message
		return standing{line: id + ": stalled, " + msg, settled: true, failed: true, message: msg}
	}
	ready := apimeta.FindStatusCondition(conds, v1alpha1.ReadyCondition)
	switch {
	// Reconciling True: a revision is being applied (the status write that
	// says so also acknowledges the request), and Ready still says how the
	// previous reconcile ended.
	case ready == nil || ready.ObservedGeneration < gr.Generation || ready.Status == "Unknown" || reconcilingTrue(conds):
		return standing{line: id + ": reconciling" + progressSuffix(conds)}
	case ready.Status == "False":
		msg := ready.Reason + ": " + ready.Message
		return standing{line: id + ": not ready, " + msg, settled: true, failed: true, message: msg}
	}
	return standing{line: fmt.Sprintf("%s: Ready, revision %s", id, orNone(gr.Status.LastAppliedRevision)), settled: true}
}

// progressSuffix is the Reconciling condition's message, if any.
func progressSuffix(conds []metav1.Condition) string {
	if c := apimeta.FindStatusCondition(conds, v1alpha1.ReconcilingCondition); c != nil && c.Message != "" {
		return ", " + c.Message
	}
	return ""
}

// fbgdStanding: settled in ACTIVE_BLUE/ACTIVE_GREEN once the job is no
// longer RECONCILING; a FAILING job or Stalled is a failure.
func fbgdStanding(p *v1alpha1.FlinkBlueGreenDeployment) standing {
	st := p.Status
	// The words of wait's lines and of the tree's Job: line.
	line := fmt.Sprintf("%s: %s, %s", objectID("fbgd", p), orNone(string(st.BlueGreenState)), fbgdJobSummary(p, shortRevision))
	if st.Error != "" {
		line += ": " + st.Error
	}
	active := st.BlueGreenState.Active()
	if s := apimeta.FindStatusCondition(st.Conditions, v1alpha1.StalledCondition); s != nil && s.Status == "True" {
		return standing{line: line, settled: true, failed: true, message: s.Reason + ": " + s.Message, active: active}
	}
	current := st.ObservedGeneration >= p.Generation
	if !active || !current || st.JobStatus.State == v1alpha1.JobReconciling {
		return standing{line: line}
	}
	if st.JobStatus.State == v1alpha1.JobFailing {
		return standing{line: line, settled: true, failed: true, message: orNone(st.Error), active: true}
	}
	return standing{line: line, settled: true, active: true}
}

// jobPhrase is "job STATE"; a FAILING status whose active job runs on
// is a rollout that failed: "rollout FAILED, job RUNNING", as the JOB
// column of `get` shows it.
func jobPhrase(st v1alpha1.FlinkBlueGreenDeploymentStatus) string {
	if st.RolloutFailedJobRunning() {
		return "rollout FAILED, job RUNNING"
	}
	return "job " + orNone(string(st.JobStatus.State))
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
