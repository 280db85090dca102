/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package review_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/review/reviewtest"
)

// TestDiffAgreesWithTheControllerOnTheCorpus: for every spec pair of the
// corpus, the action diff announces is what bluegreen.Decide does.
func TestDiffAgreesWithTheControllerOnTheCorpus(t *testing.T) {
	for _, c := range review.PlanCorpus(t) {
		_, err := reviewtest.Check(c.Base, c.Head)
		require.NoError(t, err, c.Name)
	}
}

// randomPairs is the number of random spec pairs; every action must turn up.
const randomPairs = 3000

// TestDiffAgreesWithTheControllerOnRandomEdits: the same for random specs
// and one to three random edits of them.
func TestDiffAgreesWithTheControllerOnRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewSource(503))
	seen := map[review.Action]int{}
	for i := 0; i < randomPairs; i++ {
		base := randomSpec(rng)
		head := base.DeepCopy()
		var edits []string
		for n := 1 + rng.Intn(3); n > 0; n-- {
			edits = append(edits, randomEdit(rng, head))
		}
		a, err := reviewtest.Check(fbgdObject(t, base), fbgdObject(t, head))
		require.NoError(t, err, "pair %d, edits %v\nbase %s\nhead %s", i, edits, js(base), js(head))
		seen[a]++
	}
	t.Logf("actions over %d random pairs: %v", randomPairs, seen)
	for _, a := range []review.Action{review.ActionNothing, review.ActionPatch, review.ActionSuspend, review.ActionResume,
		review.ActionSavepointRedeploy, review.ActionTransitionSavepoint, review.ActionTransitionStateless} {
		require.NotZero(t, seen[a], "no random pair announced %s", a)
	}
}

var (
	images        = []string{"flink:1.20.1", "flink:1.20.2"}
	upgradeModes  = []string{"", v1alpha1.UpgradeModeSavepoint, v1alpha1.UpgradeModeLastState, v1alpha1.UpgradeModeStateless}
	jobStates     = []string{"", v1alpha1.JobStateRunning, v1alpha1.JobStateSuspended}
	savepointPath = []string{"", "s3://sp/a", "s3://sp/b"}
	configKeys    = []string{"parallelism.default", "job.autoscaler.enabled", "kubernetes.operator.periodic.savepoint.interval",
		"taskmanager.numberOfTaskSlots", "state.backend.type"}
	timers = []string{v1alpha1.AbortGracePeriodKey, v1alpha1.DeploymentDeletionDelayKey, v1alpha1.SavepointTimeoutKey}
)

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.Intn(len(xs))] }

func randomNonce(rng *rand.Rand) *int64 {
	if rng.Intn(3) == 0 {
		return nil
	}
	n := int64(1 + rng.Intn(2))
	return &n
}

func randomSpec(rng *rand.Rand) *v1alpha1.FlinkBlueGreenDeploymentSpec {
	s := &v1alpha1.FlinkBlueGreenDeploymentSpec{Template: v1alpha1.FlinkDeploymentTemplate{Spec: v1alpha1.FlinkDeploymentSpec{
		Image: pick(rng, images),
		Job:   &v1alpha1.JobSpec{JarURI: "local:///job.jar"},
	}}}
	for n := rng.Intn(6); n > 0; n-- {
		randomEdit(rng, s)
	}
	return s
}

// randomEdit changes one field of s, maybe to the value it has; it
// returns what it did.
func randomEdit(rng *rand.Rand, s *v1alpha1.FlinkBlueGreenDeploymentSpec) string {
	t, job := &s.Template.Spec, s.Template.Spec.Job
	switch rng.Intn(12) {
	case 0:
		t.Image = pick(rng, images)
		return "image " + t.Image
	case 1:
		p := int32(1 + rng.Intn(3))
		job.Parallelism = &p
		return fmt.Sprint("parallelism ", p)
	case 2, 3:
		return editConfig(rng, t)
	case 4:
		job.UpgradeMode = pick(rng, upgradeModes)
		return "upgradeMode " + job.UpgradeMode
	case 5:
		job.State = pick(rng, jobStates)
		return "state " + job.State
	case 6:
		job.SavepointRedeployNonce = randomNonce(rng)
		return "savepointRedeployNonce"
	case 7:
		job.InitialSavepointPath = pick(rng, savepointPath)
		return "initialSavepointPath " + job.InitialSavepointPath
	case 8:
		t.RestartNonce = randomNonce(rng)
		return "restartNonce"
	case 9:
		job.EntryClass = pick(rng, []string{"", "com.example.Job"})
		return "entryClass " + job.EntryClass
	}
	return editParent(rng, s)
}

// editConfig sets, changes or removes a flinkConfiguration key, flat or
// nested.
func editConfig(rng *rand.Rand, t *v1alpha1.FlinkDeploymentSpec) string {
	conf := map[string]any{}
	if t.FlinkConfiguration != nil {
		_ = json.Unmarshal(t.FlinkConfiguration.Raw, &conf)
	}
	key := pick(rng, configKeys)
	switch rng.Intn(3) {
	case 0:
		delete(conf, key)
	case 1:
		conf[key] = fmt.Sprint(1 + rng.Intn(2))
	default:
		// A nested key equals its flat spelling.
		conf = map[string]any{"parallelism": map[string]any{"default": fmt.Sprint(1 + rng.Intn(2))}}
		key = "nested parallelism.default"
	}
	raw, _ := json.Marshal(conf)
	t.FlinkConfiguration = &apiextensionsv1.JSON{Raw: raw}
	return "flinkConfiguration " + key
}

// editParent changes a field outside template.spec.
func editParent(rng *rand.Rand, s *v1alpha1.FlinkBlueGreenDeploymentSpec) string {
	switch rng.Intn(3) {
	case 0:
		if s.Configuration == nil {
			s.Configuration = map[string]string{}
		}
		k := pick(rng, timers)
		s.Configuration[k] = pick(rng, []string{"10 min", "30s"})
		return "configuration " + k
	case 1:
		s.Promotion = &v1alpha1.Promotion{Mode: pick(rng, []string{v1alpha1.PromotionAutomatic, v1alpha1.PromotionManual})}
		return "promotion " + s.Promotion.Mode
	}
	s.Template.Metadata = &v1alpha1.TemplateMetadata{Labels: map[string]string{"team": pick(rng, []string{"a", "b"})}}
	return "template.metadata"
}

func fbgdObject(t *testing.T, s *v1alpha1.FlinkBlueGreenDeploymentSpec) *unstructured.Unstructured {
	p := &v1alpha1.FlinkBlueGreenDeployment{Spec: *s.DeepCopy()}
	p.APIVersion, p.Kind = v1alpha1.GroupVersion.String(), v1alpha1.FlinkBlueGreenDeploymentKind
	p.Name, p.Namespace = "job", "ns"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: m}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
