/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(y), &u.Object))
	return u
}

const fbgdYAML = `
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata: {name: job, namespace: ns}
spec:
  template:
    spec:
      image: flink:1
      job: {jarURI: "local:///job.jar"%s}
`

func fbgd(t *testing.T, job string) *unstructured.Unstructured {
	return obj(t, strings.Replace(fbgdYAML, "%s", job, 1))
}

// planCase is a change of the job of fbgdYAML and what diff announces.
type planCase struct {
	name       string
	base, head string
	want       Action
	fields     []string
}

var planCases = []planCase{
	{"stateful transition", ``, `, upgradeMode: savepoint, args: [x]`, ActionTransitionSavepoint, []string{"job.args"}},
	{"last-state transition", `, upgradeMode: last-state`, `, upgradeMode: last-state, entryClass: X`, ActionTransitionSavepoint, []string{"job.entryClass"}},
	{"stateless transition", ``, `, entryClass: X`, ActionTransitionStateless, []string{"job.entryClass"}},
	{"patch", ``, `, upgradeMode: savepoint`, ActionPatch, []string{"job.upgradeMode"}},
	{"suspend", ``, `, state: suspended`, ActionSuspend, []string{"job.state"}},
	{"resume", `, state: suspended`, `, state: running`, ActionResume, []string{"job.state"}},
	{"redeploy", ``, `, savepointRedeployNonce: 2`, ActionSavepointRedeploy, []string{"job.savepointRedeployNonce"}},
	// The next colour deployed from spec.template starts from the new path;
	// the running job keeps its own.
	{"savepoint path alone", ``, `, initialSavepointPath: "s3://x"`, ActionNothing, nil},
	{"change while suspended", `, state: suspended`, `, state: suspended, entryClass: X`, ActionPatch, []string{"job.entryClass"}},
}

func TestPlanActions(t *testing.T) {
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compare([]*unstructured.Unstructured{fbgd(t, c.base)}, []*unstructured.Unstructured{fbgd(t, c.head)})
			require.NoError(t, err)
			require.Len(t, r.Objects, 1)
			p := r.Objects[0].Deployment
			require.NotNil(t, p)
			assert.Equal(t, c.want, p.Action)
			assert.Equal(t, c.fields, p.Fields)
			assert.Equal(t, descriptions[c.want], p.Description)
		})
	}
}

// An Ingress change alone is applied to the parent's Ingress in place:
// no transition (FLIP-503 compares only template.spec).
func TestIngressChangeIsNotATransition(t *testing.T) {
	base := fbgd(t, ``)
	head := fbgd(t, ``)
	require.NoError(t, unstructured.SetNestedMap(head.Object, map[string]any{"template": "{{name}}.example.com"}, "spec", "ingress"))
	r, err := Compare([]*unstructured.Unstructured{base}, []*unstructured.Unstructured{head})
	require.NoError(t, err)
	require.Len(t, r.Objects, 1)
	p := r.Objects[0].Deployment
	require.NotNil(t, p)
	assert.Equal(t, ActionIngress, p.Action)
	assert.Equal(t, []string{"spec.ingress.template"}, p.Fields)
	assert.Contains(t, p.Description, "no transition")
}

func TestAddedAndRemovedDeployments(t *testing.T) {
	r, err := Compare(nil, []*unstructured.Unstructured{fbgd(t, "")})
	require.NoError(t, err)
	assert.Equal(t, Added, r.Objects[0].Change)
	assert.Equal(t, "first deployment", r.Objects[0].Deployment.Description)
	r, err = Compare([]*unstructured.Unstructured{fbgd(t, "")}, nil)
	require.NoError(t, err)
	assert.Equal(t, ActionDelete, r.Objects[0].Deployment.Action)
	assert.Equal(t, Summary{Removed: 1}, r.Summary)
}

func TestUnchangedObjectsAreLeftOut(t *testing.T) {
	r, err := Compare([]*unstructured.Unstructured{fbgd(t, "")}, []*unstructured.Unstructured{fbgd(t, "")})
	require.NoError(t, err)
	assert.False(t, r.HasChanges())
	assert.NotNil(t, r.Objects, "JSON shows [] rather than null")
}

func TestDuplicateObjectIsAnError(t *testing.T) {
	_, err := Compare(nil, []*unstructured.Unstructured{fbgd(t, ""), fbgd(t, "")})
	assert.ErrorContains(t, err, "appears twice")
}

const secretYAML = `
apiVersion: v1
kind: Secret
metadata:
  name: s
  annotations: {kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"%s"}}'}
data: {user: dXNlcg==, password: %s}
stringData: {token: %s}
`

func secret(t *testing.T, password, token string) *unstructured.Unstructured {
	return obj(t, strings.NewReplacer("%s", password).Replace(strings.Replace(secretYAML, "token: %s", "token: "+token, 1)))
}

func TestSecretValuesNeverShow(t *testing.T) {
	base := secret(t, "b2xkLXBhc3N3b3Jk", "old-token")
	head := secret(t, "bmV3LXBhc3N3b3Jk", "new-token")
	r, err := Compare([]*unstructured.Unstructured{base}, []*unstructured.Unstructured{head})
	require.NoError(t, err)
	require.Len(t, r.Objects, 1)
	d := r.Objects[0].Diff
	assert.Contains(t, d, "+  password: '*** (changed)'")
	assert.Contains(t, d, "+  token: '*** (changed)'")
	assert.NotContains(t, d, "user: '*** (changed)'")
	var out bytes.Buffer
	require.NoError(t, WriteText(&out, r, true))
	require.NoError(t, WriteMarkdown(&out, r))
	require.NoError(t, WriteJSON(&out, r))
	for _, v := range []string{"b2xkLXBhc3N3b3Jk", "bmV3LXBhc3N3b3Jk", "old-token", "new-token", "dXNlcg=="} {
		assert.NotContains(t, out.String(), v)
	}
}

func TestMaskLeavesOtherKindsAlone(t *testing.T) {
	u := fbgd(t, "")
	assert.Same(t, u, Mask(u))
	m := Mask(secret(t, "c2VjcmV0", "tok"))
	assert.Equal(t, map[string]any{"user": "***", "password": "***"}, m.Object["data"])
}

func TestTextColourOnlyWhenAsked(t *testing.T) {
	r, err := Compare([]*unstructured.Unstructured{fbgd(t, "")}, []*unstructured.Unstructured{fbgd(t, ", state: suspended")})
	require.NoError(t, err)
	var plain, coloured bytes.Buffer
	require.NoError(t, WriteText(&plain, r, false))
	require.NoError(t, WriteText(&coloured, r, true))
	assert.NotContains(t, plain.String(), "\x1b[")
	assert.Contains(t, coloured.String(), ansiGreen+"+        state: suspended"+ansiReset)
	assert.Contains(t, plain.String(), "→ suspend (job.state)")
}

func TestJSONSchemaIsStable(t *testing.T) {
	r, err := Compare(nil, []*unstructured.Unstructured{fbgd(t, "")})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, WriteJSON(&out, r))
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	assert.Equal(t, SchemaVersion, m["schemaVersion"])
	o := m["objects"].([]any)[0].(map[string]any)
	assert.Equal(t, "first-deployment", o["deployment"].(map[string]any)["action"])
	assert.Equal(t, "added", o["change"])
}

func TestCodeFenceOutgrowsBackticks(t *testing.T) {
	assert.Equal(t, "```", codeFence("a"))
	assert.Equal(t, "`````", codeFence("x ```` y"))
}

func named(t *testing.T, name, job, annotations string) *unstructured.Unstructured {
	u := fbgd(t, job)
	u.SetName(name)
	if annotations != "" {
		u.SetAnnotations(map[string]string{annotations: "orders"})
	}
	return u
}

func TestRemovedStatefulDeploymentIsSavepointedAndNamed(t *testing.T) {
	r, err := Compare([]*unstructured.Unstructured{named(t, "orders", `, upgradeMode: savepoint`, "")}, nil)
	require.NoError(t, err)
	assert.Equal(t, "removes orders: its running job is stopped after a final savepoint; a FlinkBlueGreenDeployment named orders created later resumes from it",
		r.Objects[0].Deployment.Description)
}

func TestRenameWithoutRestoreFromSaysItStartsEmpty(t *testing.T) {
	base := []*unstructured.Unstructured{named(t, "orders", `, upgradeMode: savepoint`, "")}
	r, err := Compare(base, []*unstructured.Unstructured{named(t, "orders-v2", `, upgradeMode: savepoint`, "")})
	require.NoError(t, err)
	var added string
	for _, o := range r.Objects {
		if o.Change == Added {
			added = o.Deployment.Description
		}
	}
	assert.Contains(t, added, "starts orders-v2 from empty state")
	assert.Contains(t, added, "bggitops.dev/restore-from: orders")

	r, err = Compare(base, []*unstructured.Unstructured{named(t, "orders-v2", `, upgradeMode: savepoint`, "bggitops.dev/restore-from")})
	require.NoError(t, err)
	for _, o := range r.Objects {
		if o.Change == Added {
			assert.Equal(t, "first deployment of orders-v2 from the state orders's deletion keeps (bggitops.dev/restore-from)", o.Deployment.Description)
		}
	}
}

func TestInitialStateEmptyIsNamedInTheDiff(t *testing.T) {
	u := named(t, "orders-v2", `, upgradeMode: savepoint`, "")
	u.SetAnnotations(map[string]string{"bggitops.dev/initial-state": "empty"})
	r, err := Compare([]*unstructured.Unstructured{named(t, "orders", `, upgradeMode: savepoint`, "")}, []*unstructured.Unstructured{u})
	require.NoError(t, err)
	for _, o := range r.Objects {
		if o.Change == Added {
			assert.Contains(t, o.Deployment.Description, "with empty state, as bggitops.dev/initial-state: empty asks")
		}
	}
}

func TestABadInitialStateValueIsAFailingFirstDeploymentInTheDiff(t *testing.T) {
	for _, v := range []string{"Empty", "none", ""} {
		u := named(t, "orders-v2", `, upgradeMode: savepoint`, "")
		u.SetAnnotations(map[string]string{"bggitops.dev/initial-state": v})
		r, err := Compare([]*unstructured.Unstructured{named(t, "orders", `, upgradeMode: savepoint`, "")}, []*unstructured.Unstructured{u})
		require.NoError(t, err)
		for _, o := range r.Objects {
			if o.Change == Added {
				assert.Equal(t, fmt.Sprintf(`first deployment of orders-v2 fails: bggitops.dev/initial-state is %q: the one value it takes is empty (or remove it to start from the state record of orders-v2, if any)`, v),
					o.Deployment.Description, "value %q", v)
			}
		}
	}
}

func TestRestoreFromItsOwnNameIsARestoreInTheDiff(t *testing.T) {
	r, err := Compare(nil, []*unstructured.Unstructured{named(t, "orders", `, upgradeMode: savepoint`, "bggitops.dev/restore-from")})
	require.NoError(t, err)
	assert.Equal(t, "first deployment of orders from the state orders's deletion keeps (bggitops.dev/restore-from)", r.Objects[0].Deployment.Description)
}

// A change of the object's own settings (promotion mode, timers) is named
// in the plan with its old and new value, beside the rollout it comes
// with, in the text and the Markdown: it decides whether the transition
// waits for a person, and how long it may take.
func TestSettingsChangesAreNamed(t *testing.T) {
	base := fbgd(t, `, upgradeMode: savepoint`)
	head := fbgd(t, `, upgradeMode: savepoint, entryClass: X`)
	require.NoError(t, unstructured.SetNestedField(head.Object, "Manual", "spec", "promotion", "mode"))
	require.NoError(t, unstructured.SetNestedStringMap(head.Object, map[string]string{"kubernetes.operator.bluegreen.abort.grace-period": "5 min"},
		"spec", "configuration"))
	r, err := Compare([]*unstructured.Unstructured{base}, []*unstructured.Unstructured{head})
	require.NoError(t, err)
	p := r.Objects[0].Deployment
	assert.Equal(t, ActionTransitionSavepoint, p.Action)
	assert.Equal(t, []string{"promotion.mode Automatic → Manual",
		`configuration kubernetes.operator.bluegreen.abort.grace-period (default) → "5 min"`}, p.Settings)
	var text, md bytes.Buffer
	require.NoError(t, WriteText(&text, r, false))
	require.NoError(t, WriteMarkdown(&md, r))
	assert.Contains(t, text.String(), "  → settings: promotion.mode Automatic → Manual; configuration")
	assert.Contains(t, md.String(), "; settings: promotion.mode Automatic → Manual")

	// Alone, it rolls nothing out and still shows.
	r, err = Compare([]*unstructured.Unstructured{fbgd(t, ``)}, []*unstructured.Unstructured{func() *unstructured.Unstructured {
		u := fbgd(t, ``)
		require.NoError(t, unstructured.SetNestedField(u.Object, "Manual", "spec", "promotion", "mode"))
		return u
	}()})
	require.NoError(t, err)
	assert.Equal(t, ActionNothing, r.Objects[0].Deployment.Action)
	assert.Equal(t, []string{"promotion.mode Automatic → Manual"}, r.Objects[0].Deployment.Settings)
}
