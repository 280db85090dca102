/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package flinksim_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/testing/flinksim"
)

// journal receives the shared simulator's lineage (TestMain).
var journal = &lockedBuffer{}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// Each stop records why, with the revision the FlinkDeployment carried,
// and the journal, read back, is the same lineage (a partial last line,
// being written, ignored).
func TestStopReasonsAndJournal(t *testing.T) {
	fd := create(t, fmt.Sprintf(job, "reasons", `a: b`, ""))
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	first := field(t, fd, "status", "jobStatus", "jobId")()

	respec(t, fd, func(obj map[string]any) {
		_ = unstructured.SetNestedField(obj, "flink:1.20.1", "spec", "image")
		_ = unstructured.SetNestedField(obj, "main@sha1:2222", "metadata", "annotations", "bggitops.dev/revision")
	})
	eventually(t, generation(t, fd), "2")
	eventually(t, field(t, fd, "status", "jobStatus", "state"), "RUNNING")
	second := field(t, fd, "status", "jobStatus", "jobId")()
	respec(t, fd, func(obj map[string]any) {
		_ = unstructured.SetNestedField(obj, "suspended", "spec", "job", "state")
		_ = unstructured.SetNestedField(obj, "main@sha1:3333", "metadata", "annotations", "bggitops.dev/revision")
	})
	eventually(t, field(t, fd, "status", "lifecycleState"), "SUSPENDED")
	require.NoError(t, env.Client.Delete(context.Background(), fd))
	eventually(t, field(t, fd, "metadata", "name"), `error: flinkdeployments.flink.apache.org "reasons" not found`)

	j1, _ := sim.Lineage().Job(first)
	assert.Equal(t, flinksim.StopRedeployed, j1.StopReason)
	assert.Equal(t, "main@sha1:2222", j1.StopRevision)
	j2, _ := sim.Lineage().Job(second)
	assert.Equal(t, "main@sha1:2222", j2.Revision)
	assert.Equal(t, flinksim.StopSuspended, j2.StopReason)
	assert.Equal(t, "main@sha1:3333", j2.StopRevision)
	assert.Equal(t, j1.ID, mustSavepoint(t, j2.RestoredFrom).JobID, "the in-place restart restored from the first job")

	data := append(journal.bytes(), []byte(`{"job":{"ID":"partial`)...)
	read, err := flinksim.ReadJournal(bytes.NewReader(data))
	require.NoError(t, err)
	for _, id := range []string{first, second} {
		want, _ := sim.Lineage().Job(id)
		got, ok := read.Job(id)
		require.True(t, ok, "job %s in the journal", id)
		assert.True(t, want.StartedAt.Equal(got.StartedAt) && want.StoppedAt.Equal(got.StoppedAt))
		want.StartedAt, want.StoppedAt = got.StartedAt, got.StoppedAt
		assert.Equal(t, want, got)
	}
	assert.Len(t, read.Savepoints(), len(sim.Lineage().Savepoints()))
}

func mustSavepoint(t *testing.T, path string) flinksim.Savepoint {
	t.Helper()
	sp, ok := sim.Lineage().Savepoint(path)
	require.True(t, ok, "savepoint %q recorded", path)
	return sp
}
