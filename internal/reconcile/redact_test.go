/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package reconcile

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"bggitops.dev/bg-gitops/api/v1alpha1"
	"bggitops.dev/bg-gitops/internal/bluegreen"
	"bggitops.dev/bg-gitops/internal/redact"
	"bggitops.dev/bg-gitops/internal/scheme"
	"bggitops.dev/bg-gitops/internal/status"
)

// secretFixture records, in a namespace of its own, the values a
// reconcile may know: a git credential read through secretClient and a
// Secret of the rendered set.
func secretFixture(t *testing.T) (ns, credential, rendered string, reg *redact.Registry) {
	ns = fmt.Sprintf("scrub-%d", time.Now().UnixNano())
	credential, rendered = "git-Passw0rd-"+ns, "rendered-value-"+ns
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "git-auth"},
		Data: map[string][]byte{"username": []byte("git"), "password": []byte(credential)}}
	reg = redact.NewRegistry()
	c := secretClient{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(sec).Build(), Redact: reg}
	require.NoError(t, c.Get(context.Background(), client.ObjectKeyFromObject(sec), &corev1.Secret{}))
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": ns},
		"data":     map[string]any{"k": base64.StdEncoding.EncodeToString([]byte(rendered))}}}
	reg.NoteRendered(types.NamespacedName{Namespace: ns, Name: "g"}, []*unstructured.Unstructured{obj})
	return ns, credential, rendered, reg
}

// TestFinishScrubsSecretValues: an error that quotes a credential and a
// rendered Secret's value (raw and base64) reaches the conditions, the
// event, the log line and the returned error of both reconcilers as ***.
func TestFinishScrubsSecretValues(t *testing.T) {
	ns, credential, rendered, reg := secretFixture(t)
	quote := fmt.Sprintf("password %s, label %q, data %s", credential, rendered, base64.StdEncoding.EncodeToString([]byte(rendered)))
	var logs strings.Builder
	ctx := logf.IntoContext(context.Background(), funcr.New(func(p, a string) { logs.WriteString(p + a + "\n") }, funcr.Options{Verbosity: 10}))
	check := func(t *testing.T, what, msg string) {
		t.Helper()
		for _, v := range []string{credential, rendered, base64.StdEncoding.EncodeToString([]byte(rendered))} {
			assert.NotContains(t, msg, v, what)
		}
	}

	t.Run("GitRepository", func(t *testing.T) {
		for _, err := range []error{
			failed(v1alpha1.FetchFailedCondition, "Unreachable", errors.New(quote)),             // transient: returned
			waitingFailure(v1alpha1.ApplyFailedCondition, "ApplyFailed", errors.New(quote)),     // waiting: logged
			stalledFailure(v1alpha1.FetchFailedCondition, "InvalidSchedule", errors.New(quote)), // stalled: terminal
		} {
			logs.Reset()
			rec := events.NewFakeRecorder(10)
			r := &GitRepositoryReconciler{Client: &statusWrites{}, Recorder: rec, Now: func() time.Time { return testNow }, Redact: reg}
			gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", Generation: 1}}
			run := &gitRun{gr: gr, base: gr.DeepCopy(), result: ctrlResult(time.Minute)}
			_, returned := r.finish(ctx, run, err)
			require.NotEmpty(t, gr.Status.Conditions)
			for _, c := range gr.Status.Conditions {
				check(t, "condition "+c.Type, c.Message)
				assert.Contains(t, c.Message, redact.Redacted)
			}
			check(t, "event", <-rec.Events)
			check(t, "log", logs.String())
			if returned != nil {
				check(t, "returned error", returned.Error())
				assert.ErrorIs(t, returned, errors.Unwrap(err), "the cause stays reachable")
			}
		}
	})

	t.Run("FlinkBlueGreenDeployment", func(t *testing.T) {
		logs.Reset()
		rec := events.NewFakeRecorder(10)
		r := &FlinkBlueGreenReconciler{Client: &statusWrites{}, Recorder: rec, Now: func() time.Time { return testNow }, Redact: reg}
		p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job", Generation: 1}}
		_, returned := r.finish(ctx, p, 0, rejectedAgain(errors.New(quote)))
		require.NoError(t, returned)
		for _, c := range p.Status.Conditions {
			check(t, "condition "+c.Type, c.Message)
		}
		check(t, "event", <-rec.Events)
		check(t, "log", logs.String())
		_, returned = r.finish(ctx, p, 0, errors.New(quote))
		check(t, "returned error", returned.Error())
	})
}

// forgeEcho answers every request 502 with a body that echoes the request's
// token and a rendered Secret's value, as a misbehaving proxy might.
func forgeEcho(t *testing.T, echo string) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, `{"message":"upstream said %s; you sent %s"}`, echo, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// TestCommitStatusScrubsSecretValues: a description and a forge error
// that carry secret values are posted and shown as ***.
func TestCommitStatusScrubsSecretValues(t *testing.T) {
	ns, _, rendered, reg := secretFixture(t)
	forge, _ := forgeEcho(t, rendered)
	const token = "ghp_scrubTestToken0123"
	tokenSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forge"}, Data: map[string][]byte{"token": []byte(token)}}
	c := &CommitStatusReporter{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tokenSecret).Build(),
		AllowInsecureHTTP: true, Now: func() time.Time { return testNow }, Redact: reg}
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", Generation: 1},
		Spec: v1alpha1.GitRepositorySpec{CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "github", Address: forge.URL,
			Repository: "org/repo", SecretRef: v1alpha1.LocalObjectReference{Name: "forge"}}}}
	gr.Status.LastAttemptedRevision = "main@sha1:" + strings.Repeat("a", 40)
	gr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ApplyFailedCondition, Status: metav1.ConditionTrue, Reason: "ApplyFailed",
		Message: "label " + rendered}}
	desired := status.SyncDesired(gr)
	require.Len(t, desired, 1)
	err := c.report(context.Background(), gr, desired, &gr.Status.CommitStatuses, reg.ForSource(client.ObjectKeyFromObject(gr)), nil, nil)
	require.Error(t, err)
	assert.Equal(t, "label "+redact.Redacted, desired[0].Status.Description, "the description posted")
	assert.NotContains(t, err.Error(), rendered)
	assert.NotContains(t, err.Error(), token)
}

// TestCommitStatusCredentialsStayInTheirNamespace: a
// FlinkBlueGreenDeployment in namespace b whose bggitops.dev/source
// annotation names a GitRepository of namespace a gets no commit status
// posted with a's token, unless that GitRepository's inventory lists it
// (it applied the object itself). In its own namespace the annotation is
// trusted.
func TestCommitStatusCredentialsStayInTheirNamespace(t *testing.T) {
	forge, requests := forgeEcho(t, "")
	rev := "main@sha1:" + strings.Repeat("b", 40)
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "repo"},
		Spec: v1alpha1.GitRepositorySpec{CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "github", Address: forge.URL,
			Repository: "org/repo", SecretRef: v1alpha1.LocalObjectReference{Name: "forge"}}}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "forge"}, Data: map[string][]byte{"token": []byte("a-token")}}
	fbgd := func(ns string) *v1alpha1.FlinkBlueGreenDeployment {
		return &v1alpha1.FlinkBlueGreenDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job", Generation: 1, Annotations: map[string]string{
				v1alpha1.SourceAnnotation: "a/repo", v1alpha1.RevisionAnnotation: rev}},
			Status: v1alpha1.FlinkBlueGreenDeploymentStatus{BlueGreenState: v1alpha1.ActiveBlue, ActiveRevision: rev,
				ActiveDeployment: "job-blue", JobStatus: v1alpha1.JobStatus{State: v1alpha1.JobRunning}},
		}
	}
	reporter := func(gr *v1alpha1.GitRepository) *CommitStatusReporter {
		return &CommitStatusReporter{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(gr, token).Build(),
			AllowInsecureHTTP: true, Now: func() time.Time { return testNow }}
	}

	t.Run("another namespace, not applied by it", func(t *testing.T) {
		requests.Store(0)
		p := fbgd("b")
		assert.Zero(t, reporter(gr).ReportRollout(context.Background(), p, nil), "nothing to retry")
		assert.Zero(t, requests.Load(), "a's token was used for b's object")
		c := findCondition(p.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
		require.NotNil(t, c)
		assert.Equal(t, "SourceNotVerified", c.Reason)
	})
	t.Run("another namespace, no such GitRepository", func(t *testing.T) {
		p := fbgd("b")
		p.Annotations[v1alpha1.SourceAnnotation] = "a/absent"
		reporter(gr).ReportRollout(context.Background(), p, nil)
		c := findCondition(p.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
		require.NotNil(t, c)
		assert.Equal(t, "SourceNotVerified", c.Reason, "the same answer as for one that exists")
	})
	t.Run("another namespace, being applied by it", func(t *testing.T) {
		requests.Store(0)
		applying := gr.DeepCopy()
		applying.Status.LastAttemptedRevision = rev
		p := fbgd("b")
		r := reporter(applying)
		r.Applying = &Applying{}
		r.Applying.begin("a/repo", rev, []*unstructured.Unstructured{fbgdUnstructured("b", "job")})
		r.ReportRollout(context.Background(), p, nil)
		assert.NotZero(t, requests.Load(), "a new object's first status is posted while its revision is applied, before the inventory lists it")
	})
	t.Run("another namespace, its apply did not write the object", func(t *testing.T) {
		// b's tenant created b/job first, with a's annotations: a's
		// apply of the same name is refused (not its object), and the
		// object stays b's own after the apply returns.
		requests.Store(0)
		r := reporter(gr.DeepCopy())
		r.Applying = &Applying{}
		r.Applying.begin("a/repo", rev, []*unstructured.Unstructured{fbgdUnstructured("b", "job"), fbgdUnstructured("a", "other")})
		r.Applying.applied("a/repo", rev, &v1alpha1.Inventory{Entries: []v1alpha1.ObjectRef{{ID: "a_other_bggitops.dev_FlinkBlueGreenDeployment", Version: "v1alpha1"}}})
		p := fbgd("b")
		r.ReportRollout(context.Background(), p, nil)
		assert.Zero(t, requests.Load(), "a's token was used for an object a's apply did not write")
		c := findCondition(p.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
		require.NotNil(t, c)
		assert.Equal(t, "SourceNotVerified", c.Reason)
	})
	t.Run("another namespace, its commit failed to build", func(t *testing.T) {
		requests.Store(0)
		failing := gr.DeepCopy()
		failing.Status.LastAttemptedRevision = rev // never applied
		p := fbgd("b")
		r := reporter(failing)
		r.Applying = &Applying{}
		r.Applying.begin("a/repo", rev, []*unstructured.Unstructured{fbgdUnstructured("a", "other")})
		r.ReportRollout(context.Background(), p, nil)
		assert.Zero(t, requests.Load(), "a's token was used on a's failing commit for an object a does not apply")
		c := findCondition(p.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
		require.NotNil(t, c)
		assert.Equal(t, "SourceNotVerified", c.Reason)
	})
	t.Run("another namespace, in its inventory", func(t *testing.T) {
		requests.Store(0)
		applied := gr.DeepCopy()
		applied.Status.Inventory = &v1alpha1.Inventory{Entries: []v1alpha1.ObjectRef{{ID: "b_job_bggitops.dev_FlinkBlueGreenDeployment", Version: "v1alpha1"}}}
		reporter(applied).ReportRollout(context.Background(), fbgd("b"), nil)
		assert.NotZero(t, requests.Load(), "the GitRepository that applied the object reports its rollout")
	})
	t.Run("same namespace", func(t *testing.T) {
		requests.Store(0)
		reporter(gr).ReportRollout(context.Background(), fbgd("a"), nil)
		assert.NotZero(t, requests.Load())
	})
}

// TestInsecureForgeAddressRefused: without AllowInsecureHTTP an http://
// forge address is refused before the token is read, and says how to fix it.
func TestInsecureForgeAddressRefused(t *testing.T) {
	forge, requests := forgeEcho(t, "")
	reads := &secretReads{Client: fake.NewClientBuilder().WithScheme(scheme.New()).Build()}
	c := &CommitStatusReporter{Client: reads, Now: func() time.Time { return testNow }}
	gr := &v1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "g", Generation: 1},
		Spec: v1alpha1.GitRepositorySpec{CommitStatus: &v1alpha1.CommitStatusSpec{Provider: "gitea", Address: forge.URL,
			Repository: "org/repo", SecretRef: v1alpha1.LocalObjectReference{Name: "forge"}}}}
	gr.Status.LastAttemptedRevision = "main@sha1:" + strings.Repeat("c", 40)
	gr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Progressing"}}
	c.ReportSync(context.Background(), gr, nil)
	cond := findCondition(gr.Status.Conditions, v1alpha1.CommitStatusFailedCondition)
	require.NotNil(t, cond)
	assert.Equal(t, "InsecureAddress", cond.Reason)
	assert.Contains(t, cond.Message, "--allow-insecure-http")
	assert.Zero(t, reads.n.Load(), "the token Secret was read")
	assert.Zero(t, requests.Load())
}

type secretReads struct {
	client.Client
	n atomic.Int32
}

func (s *secretReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		s.n.Add(1)
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// TestChildErrorsAreScrubbedWhole: a child's status.error is scrubbed
// before Decide shortens it, so a secret value the cut would split is
// still found and replaced.
func TestChildErrorsAreScrubbedWhole(t *testing.T) {
	ns, credential, _, reg := secretFixture(t)
	r := &FlinkBlueGreenReconciler{Redact: reg}
	p := &v1alpha1.FlinkBlueGreenDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job"}}
	ch := &bluegreen.Child{Error: strings.Repeat("x", 190) + " password " + credential}
	r.scrubChildErrors(p, ch, nil)
	assert.NotContains(t, ch.Error, credential)
	assert.Contains(t, ch.Error, "password ***")
}

func fbgdUnstructured(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.FlinkBlueGreenDeploymentKind))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}
