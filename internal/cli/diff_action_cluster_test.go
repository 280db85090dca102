/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Tests that the controller takes the action `bg-gitops diff` announces, end to
// end on a real API server.

package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/render"
	"bggitops.dev/bg-gitops/internal/review"
	"bggitops.dev/bg-gitops/internal/testing/testenv"
)

// TestControllerTakesTheAnnouncedAction applies the base and then the head
// FlinkBlueGreenDeployment of every pull-request case to a real API server
// with the controllers and the Flink simulator running, and checks that the
// outcome is the action diff announced.
func TestControllerTakesTheAnnouncedAction(t *testing.T) {
	env := cluster(t)
	for _, c := range prCases {
		if c.action == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newPRRepo(t)
			c.change(r)
			r.commit(c.name)
			announced := announcedAction(t, r)
			require.Equal(t, c.action, announced)

			ns := newNamespace(t, env)
			base, head := fbgdAt(t, r, "main", ns), fbgdAt(t, r, "pr", ns)
			require.NoError(t, env.Client.Create(context.Background(), base))
			eventually(t, "first deployment ACTIVE_BLUE", fbgdIn(env, t, ns, base.Name, v1alpha1.ActiveBlue, v1alpha1.JobRunning))
			blue, _ := flinkChild(env, ns, base.Name+"-blue")

			applyHead(t, env, head)
			outcomes[announced](t, env, head, blue)
		})
	}
}

func announcedAction(t *testing.T, r *prRepo) review.Action {
	t.Helper()
	res := runCLI(t, "diff", "--repo", r.dir, "--base", "main", "--head", "pr", "--path", prPath, "--format", "json")
	require.Equal(t, 1, res.code, res.stderr)
	var rep review.Report
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep))
	for _, o := range rep.Objects {
		if o.Deployment != nil {
			return o.Deployment.Action
		}
	}
	t.Fatal("no FlinkBlueGreenDeployment in the diff")
	return ""
}

// fbgdAt renders the production overlay at ref and returns its
// FlinkBlueGreenDeployment in namespace ns, with test-speed timers and the
// revision stamp a GitRepository would add. No outcome aborts: the abort
// grace period stays long, so a rollout never races it.
func fbgdAt(t *testing.T, r *prRepo, ref, ns string) *v1alpha1.FlinkBlueGreenDeployment {
	t.Helper()
	objs, sha, err := render.BuildRef(r.dir, ref, prPath, render.Options{})
	require.NoError(t, err)
	for _, u := range objs {
		if u.GetKind() != v1alpha1.FlinkBlueGreenDeploymentKind {
			continue
		}
		p := &v1alpha1.FlinkBlueGreenDeployment{}
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p))
		p.Namespace = ns
		p.Annotations = map[string]string{v1alpha1.RevisionAnnotation: ref + "@sha1:" + sha}
		p.Spec.Configuration[v1alpha1.AbortGracePeriodKey] = "10 min"
		p.Spec.Configuration[v1alpha1.RescheduleIntervalKey] = "200ms"
		p.Spec.Configuration[v1alpha1.DeploymentDeletionDelayKey] = "0s"
		return p
	}
	t.Fatalf("no FlinkBlueGreenDeployment rendered at %s", ref)
	return nil
}

// applyHead writes the head spec and revision over the live object, as the
// GitRepository's apply of the merged pull request would.
func applyHead(t *testing.T, env *testenv.Env, head *v1alpha1.FlinkBlueGreenDeployment) {
	t.Helper()
	require.Eventually(t, func() bool {
		p := getFBGD(t, env, head.Namespace, head.Name)
		p.Spec = head.Spec
		p.Annotations[v1alpha1.RevisionAnnotation] = head.Annotations[v1alpha1.RevisionAnnotation]
		return env.Client.Update(context.Background(), p) == nil
	}, 5*time.Second, 50*time.Millisecond)
}

type outcome func(t *testing.T, env *testenv.Env, head *v1alpha1.FlinkBlueGreenDeployment, blueBefore *unstructured.Unstructured)

var outcomes = map[review.Action]outcome{
	review.ActionTransitionSavepoint: func(t *testing.T, env *testenv.Env, head *v1alpha1.FlinkBlueGreenDeployment, _ *unstructured.Unstructured) {
		ns, name := head.Namespace, head.Name
		eventually(t, "ACTIVE_GREEN", fbgdIn(env, t, ns, name, v1alpha1.ActiveGreen, v1alpha1.JobRunning))
		eventually(t, "blue deleted", func() bool { _, ok := flinkChild(env, ns, name+"-blue"); return !ok })
		require.NotNil(t, getFBGD(t, env, ns, name).Status.Savepoint, "a savepoint was taken")
		green, _ := flinkChild(env, ns, name+"-green")
		sp := nestedString(green, "spec", "job", "initialSavepointPath")
		require.NotEmpty(t, sp, "green starts from the savepoint")
		taken, ok := sim.Lineage().Savepoint(sp)
		require.True(t, ok, "the savepoint was taken by the Flink operator")
		assert.NotEmpty(t, taken.JobID)
		assert.Equal(t, head.Spec.Template.Spec.Image, nestedString(green, "spec", "image"))
	},
	review.ActionPatch: func(t *testing.T, env *testenv.Env, head *v1alpha1.FlinkBlueGreenDeployment, _ *unstructured.Unstructured) {
		ns, name := head.Namespace, head.Name
		eventually(t, "blue patched in place", func() bool {
			blue, ok := flinkChild(env, ns, name+"-blue")
			return ok && childMatches(t, blue, head) && fbgdIn(env, t, ns, name, v1alpha1.ActiveBlue, v1alpha1.JobRunning)()
		})
		_, green := flinkChild(env, ns, name+"-green")
		assert.False(t, green, "no other colour for an in-place patch")
	},
	review.ActionSuspend: func(t *testing.T, env *testenv.Env, head *v1alpha1.FlinkBlueGreenDeployment, _ *unstructured.Unstructured) {
		ns, name := head.Namespace, head.Name
		eventually(t, "job SUSPENDED", fbgdIn(env, t, ns, name, v1alpha1.ActiveBlue, v1alpha1.JobSuspended))
		blue, _ := flinkChild(env, ns, name+"-blue")
		assert.Equal(t, "suspended", nestedString(blue, "spec", "job", "state"))
		_, green := flinkChild(env, ns, name+"-green")
		assert.False(t, green)
	},
	review.ActionNothing: func(t *testing.T, env *testenv.Env, head *v1alpha1.FlinkBlueGreenDeployment, before *unstructured.Unstructured) {
		ns, name := head.Namespace, head.Name
		// The controller records the generation it decided on after the
		// decision's actions have run: once head's is observed, whatever
		// it would do to the child has been done.
		// (Generation 1 is base's: head changed the spec.)
		eventually(t, "head generation observed", func() bool {
			p := getFBGD(t, env, ns, name)
			return p.Generation > 1 && p.Status.ObservedGeneration == p.Generation
		})
		blue, _ := flinkChild(env, ns, name+"-blue")
		assert.Equal(t, before.GetGeneration(), blue.GetGeneration(), "the child spec is unchanged")
		assert.Equal(t, before.Object["spec"], blue.Object["spec"])
		assert.True(t, fbgdIn(env, t, ns, name, v1alpha1.ActiveBlue, v1alpha1.JobRunning)())
	},
	review.ActionSavepointRedeploy: func(t *testing.T, env *testenv.Env, head *v1alpha1.FlinkBlueGreenDeployment, _ *unstructured.Unstructured) {
		ns, name := head.Namespace, head.Name
		eventually(t, "ACTIVE_GREEN", fbgdIn(env, t, ns, name, v1alpha1.ActiveGreen, v1alpha1.JobRunning))
		assert.Nil(t, getFBGD(t, env, ns, name).Status.Savepoint, "no savepoint is taken")
		green, _ := flinkChild(env, ns, name+"-green")
		assert.Empty(t, nestedString(green, "spec", "job", "initialSavepointPath"), "green starts from the template's (empty) savepoint path")
	},
}

// childMatches reports whether the child runs head's template spec (its
// initialSavepointPath is the controller's to set).
func childMatches(t *testing.T, child *unstructured.Unstructured, head *v1alpha1.FlinkBlueGreenDeployment) bool {
	t.Helper()
	want := head.Spec.Template.Spec.DeepCopy()
	want.Job.InitialSavepointPath = ""
	got := &v1alpha1.FlinkDeploymentSpec{}
	spec, _, _ := unstructured.NestedMap(child.Object, "spec")
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(spec, got))
	if got.Job != nil {
		got.Job.InitialSavepointPath = ""
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	return jsonEqual(a, b)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(ax) == string(by)
}
