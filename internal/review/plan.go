/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// plan.go: Plan and Action — what the controller will do with each
// FlinkBlueGreenDeployment that is added, changed or removed, from
// bluegreen.Plan.

package review

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
)

// Action is what the controller does with a FlinkBlueGreenDeployment change.
type Action string

// Actions, named for the JSON output.
const (
	ActionFirstDeployment     Action = "first-deployment"
	ActionTransitionSavepoint Action = "transition-savepoint"
	ActionTransitionStateless Action = "transition-stateless"
	ActionPatch               Action = "patch"
	ActionSuspend             Action = "suspend"
	ActionResume              Action = "resume"
	ActionSavepointRedeploy   Action = "savepoint-redeploy"
	ActionNothing             Action = "nothing"
	ActionIngress             Action = "ingress"
	ActionDelete              Action = "delete"
)

var descriptions = map[Action]string{
	ActionFirstDeployment:     "first deployment",
	ActionTransitionSavepoint: "blue/green transition with savepoint",
	ActionTransitionStateless: "blue/green transition (stateless, no savepoint)",
	ActionPatch:               "in-place patch of the running job",
	ActionSuspend:             "suspend",
	ActionResume:              "resume",
	ActionSavepointRedeploy:   "savepoint redeploy",
	ActionNothing:             "nothing for the job",
	ActionIngress:             "in-place change of the parent's Ingress (spec.ingress); no job is touched, no transition",
	ActionDelete:              "deletion of the job and its FlinkDeployments",
}

// Plan is what the controller will do with one FlinkBlueGreenDeployment.
type Plan struct {
	Action      Action `json:"action"`
	Description string `json:"description"`
	// Classification is bluegreen.Classify's type (empty for added and
	// removed objects).
	Classification string `json:"classification,omitempty"`
	// Fields caused the action, as bluegreen.Classify names them.
	Fields []string `json:"fields,omitempty"`
	// Check is what the cluster says of the child the controller would
	// create from the head: "" when it was asked and takes it,
	// "will be refused: …", or "not checked against a cluster".
	Check string `json:"check,omitempty"`
	// Settings are the changes of the object's own settings (promotion
	// mode, spec.configuration), old → new: they roll nothing out but
	// change how this and the next rollouts run.
	Settings []string `json:"settings,omitempty"`
}

// CheckRefused starts the Check of a child the cluster will refuse;
// NotChecked is the Check of a plan no cluster was asked about.
const (
	CheckRefused = "will be refused: "
	NotChecked   = "not checked against a cluster"
)

// WillBeRefused reports a plan whose child the cluster will refuse.
func (p *Plan) WillBeRefused() bool { return p != nil && strings.HasPrefix(p.Check, CheckRefused) }

func newPlan(a Action, d *bluegreen.Diff) *Plan {
	p := &Plan{Action: a, Description: descriptions[a]}
	if d != nil {
		p.Classification = string(d.Type)
		p.Fields = d.Fields
	}
	return p
}

// isFBGD reports whether u is a FlinkBlueGreenDeployment of our group.
func isFBGD(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == v1alpha1.GroupVersion.Group && gvk.Kind == v1alpha1.FlinkBlueGreenDeploymentKind
}

// plan is what the controller does with a FlinkBlueGreenDeployment change
// (bluegreen.Plan, the controller's own rule, for a changed object); base
// or head is nil for an added or removed object.
func plan(base, head *unstructured.Unstructured) (*Plan, error) {
	switch {
	case base == nil:
		return firstPlan(head)
	case head == nil:
		return deletePlan(base)
	}
	old, err := fbgdSpec(base)
	if err != nil {
		return nil, err
	}
	cur, err := fbgdSpec(head)
	if err != nil {
		return nil, err
	}
	return SpecPlan(old, old, cur), nil
}

// SpecPlan is what the controller does when the parent's spec old becomes
// cur and its running child runs base (bluegreen.BaseOf; old when nothing
// runs): the rollout is judged against base, as the controller judges it;
// ingress and settings changes against old.
func SpecPlan(base, old, cur *v1alpha1.FlinkBlueGreenDeploymentSpec) *Plan {
	r, d := bluegreen.Plan(base, cur)
	a := actions[r]
	if r == bluegreen.RolloutNothing && !bluegreen.SameJSON(old.Ingress, cur.Ingress) {
		a = ActionIngress
	}
	p := newPlan(a, &d)
	p.Settings = settingsChanges(old, cur)
	return p
}

// actions names the controller's rollouts in the report.
var actions = map[bluegreen.Rollout]Action{
	bluegreen.RolloutNothing:            ActionNothing,
	bluegreen.RolloutInPlace:            ActionPatch,
	bluegreen.RolloutSuspend:            ActionSuspend,
	bluegreen.RolloutResume:             ActionResume,
	bluegreen.RolloutSavepointRedeploy:  ActionSavepointRedeploy,
	bluegreen.RolloutBlueGreenSavepoint: ActionTransitionSavepoint,
	bluegreen.RolloutBlueGreenStateless: ActionTransitionStateless,
}

func fbgdSpec(u *unstructured.Unstructured) (*v1alpha1.FlinkBlueGreenDeploymentSpec, error) {
	p, err := fbgdOf(u)
	if err != nil {
		return nil, err
	}
	return &p.Spec, nil
}

// firstPlan is the plan of an added FlinkBlueGreenDeployment: where its
// first job's state comes from (bluegreen's rule, see bluegreen.RecordOf).
func firstPlan(head *unstructured.Unstructured) (*Plan, error) {
	p, err := fbgdOf(head)
	if err != nil {
		return nil, err
	}
	pl := newPlan(ActionFirstDeployment, nil)
	tmpl := &p.Spec.Template.Spec
	switch from := bluegreen.RecordOf(p); {
	case !tmpl.Stateful() || templatePath(p) != "":
	case bluegreen.InitialStateError(p) != "":
		pl.Description = fmt.Sprintf("first deployment of %s fails: %s", p.Name, bluegreen.InitialStateError(p))
	case bluegreen.StartsEmptyOnPurpose(p):
		pl.Description = fmt.Sprintf("first deployment of %s with empty state, as %s: empty asks", p.Name, v1alpha1.InitialStateAnnotation)
	case bluegreen.RestoresOnPurpose(p):
		pl.Description = fmt.Sprintf("first deployment of %s from the state %s's deletion keeps (%s)", p.Name, from, v1alpha1.RestoreFromAnnotation)
	default:
		pl.Description = fmt.Sprintf("first deployment of %s: from the state an earlier %s's deletion kept, if any, else empty", p.Name, p.Name)
	}
	return pl, nil
}

// deletePlan is the plan of a removed FlinkBlueGreenDeployment.
func deletePlan(base *unstructured.Unstructured) (*Plan, error) {
	p, err := fbgdOf(base)
	if err != nil {
		return nil, err
	}
	pl := newPlan(ActionDelete, nil)
	if p.Spec.Template.Spec.Stateful() {
		pl.Description = fmt.Sprintf("removes %s: its running job is stopped after a final savepoint; a FlinkBlueGreenDeployment named %s created later resumes from it",
			p.Name, p.Name)
	}
	return pl, nil
}

// startsEmpty reports an added stateful FlinkBlueGreenDeployment that
// names no state to start from (see StartsEmpty).
func startsEmpty(head *unstructured.Unstructured) bool {
	p, err := fbgdOf(head)
	return err == nil && StartsEmpty(p)
}

// StartsEmpty reports a stateful FlinkBlueGreenDeployment that names no
// state to start from (no initialSavepointPath, restore-from or
// initial-state, whatever its value: a bad one fails the deployment):
// added beside the removal of another, a rename that loses its state.
func StartsEmpty(p *v1alpha1.FlinkBlueGreenDeployment) bool {
	tmpl := &p.Spec.Template.Spec
	_, set := p.Annotations[v1alpha1.InitialStateAnnotation]
	return tmpl.Stateful() && templatePath(p) == "" && !set && !bluegreen.RestoresOnPurpose(p)
}

// renames tells, for each FlinkBlueGreenDeployment the change adds that
// starts empty while a stateful one of its namespace is removed, that
// this is a rename losing the state unless restore-from says otherwise.
func renames(r *Report, removed map[string][]string, added map[int]*unstructured.Unstructured) {
	for i, u := range added {
		gone := removed[u.GetNamespace()]
		if len(gone) == 0 || !startsEmpty(u) {
			continue
		}
		r.Objects[i].Deployment.Description = fmt.Sprintf("starts %s from empty state: this change removes %s, whose state is kept for a FlinkBlueGreenDeployment named %s; set %s: %s on %s to carry it over (a rename)",
			u.GetName(), strings.Join(gone, ", "), gone[0], v1alpha1.RestoreFromAnnotation, gone[0], u.GetName())
	}
}

func fbgdOf(u *unstructured.Unstructured) (*v1alpha1.FlinkBlueGreenDeployment, error) {
	p := &v1alpha1.FlinkBlueGreenDeployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
		return nil, fmt.Errorf("%s %s: not a valid FlinkBlueGreenDeployment: %w", u.GetKind(), u.GetName(), err)
	}
	return p, nil
}

// templatePath is the template's initialSavepointPath.
func templatePath(p *v1alpha1.FlinkBlueGreenDeployment) string {
	if j := p.Spec.Template.Spec.Job; j != nil {
		return j.InitialSavepointPath
	}
	return ""
}
