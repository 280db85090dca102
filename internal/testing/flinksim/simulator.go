/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// simulator.go: Simulator, its Options and SetupWithManager, and the
// savepoint, checkpoint and configuration paths it reads and writes.

package flinksim

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// Finalizer is held on every FlinkDeployment while its job is torn down,
// as the Flink operator does.
const Finalizer = "flink.apache.org/finalizer"

// Options are the simulated delays.
type Options struct {
	// StartDelay is the time from deploy to RUNNING (default 1s).
	StartDelay time.Duration
	// SavepointDelay is the time a savepoint takes (default 1s).
	SavepointDelay time.Duration
	// TeardownDelay is how long the finalizer is held after deletion (default 200ms).
	TeardownDelay time.Duration
	// ObserveDelay is how long a new spec goes unobserved (default 0: at
	// once); FaultObserveDelay overrides it per FlinkDeployment.
	ObserveDelay time.Duration
	// SnapshotControllerOff leaves every FlinkStateSnapshot untouched, as
	// an operator whose snapshot controller is off (see
	// FaultSnapshotControllerOff).
	SnapshotControllerOff bool
	// Lineage is the record to go on from (ReadJournal of the journal of a
	// simulator that ran before); default a new one.
	Lineage *Lineage
}

func (o Options) withDefaults() Options {
	if o.StartDelay == 0 {
		o.StartDelay = time.Second
	}
	if o.SavepointDelay == 0 {
		o.SavepointDelay = time.Second
	}
	if o.TeardownDelay == 0 {
		o.TeardownDelay = 200 * time.Millisecond
	}
	return o
}

// Simulator reconciles FlinkDeployments and FlinkStateSnapshots.
type Simulator struct {
	client  client.Client
	opts    Options
	lineage *Lineage
	now     func() time.Time

	mu       sync.Mutex
	restores map[string]string                // jobID → savepoint path it will restore from
	seen     map[types.NamespacedName]seenGen // when a not yet observed generation was first seen
	// savepointFaults counts the savepoints FaultSavepoint hit, by
	// FlinkDeployment uid; faulted holds the snapshots (by uid) it hit.
	savepointFaults map[types.UID]int
	faulted         map[types.UID]bool
}

// seenGen is the first sight of a FlinkDeployment's new generation.
type seenGen struct {
	generation int64
	at         time.Time
}

// New returns a simulator; call SetupWithManager to start it.
func New(opts Options) *Simulator {
	lineage := opts.Lineage
	if lineage == nil {
		lineage = newLineage()
	}
	return &Simulator{
		opts: opts.withDefaults(), lineage: lineage, now: time.Now,
		restores: map[string]string{}, seen: map[types.NamespacedName]seenGen{},
		savepointFaults: map[types.UID]int{}, faulted: map[types.UID]bool{},
	}
}

// Lineage returns the record of jobs and savepoints.
func (s *Simulator) Lineage() *Lineage { return s.lineage }

// SetupWithManager registers the two simulated controllers.
func (s *Simulator) SetupWithManager(mgr ctrl.Manager) error {
	s.client = mgr.GetClient()
	fd := &unstructured.Unstructured{}
	fd.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	if err := ctrl.NewControllerManagedBy(mgr).Named("flinksim-deployment").
		For(fd).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4, SkipNameValidation: ptr(true)}).
		Complete(ctrlFunc(s.reconcileDeployment)); err != nil {
		return err
	}
	snap := &unstructured.Unstructured{}
	snap.SetGroupVersionKind(v1alpha1.FlinkStateSnapshotGVK)
	return ctrl.NewControllerManagedBy(mgr).Named("flinksim-snapshot").
		For(snap).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4, SkipNameValidation: ptr(true)}).
		Complete(ctrlFunc(s.reconcileSnapshot))
}

func ptr[T any](v T) *T { return &v }

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Simulator) setRestore(jobID, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restores[jobID] = path
}

func (s *Simulator) takeRestore(jobID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.restores[jobID]
	delete(s.restores, jobID)
	return p, ok
}

// savepointPath builds a savepoint location under state.savepoints.dir.
func savepointPath(fd *unstructured.Unstructured, jobID string) string {
	dir := configValue(fd, "state.savepoints.dir")
	if dir == "" {
		dir = "file:///opt/flink/volume/flink-sp"
	}
	return fmt.Sprintf("%s/savepoint-%s-%s", normalizeDir(dir), jobID[:6], newID()[:12])
}

// checkpointPath builds a checkpoint location under state.checkpoints.dir,
// laid out as Flink does (<dir>/<jobId>/chk-<n>). A simulated job fails at
// most once (its restart is a new job), so it has one checkpoint.
func checkpointPath(fd *unstructured.Unstructured, jobID string) string {
	dir := configValue(fd, "state.checkpoints.dir")
	if dir == "" {
		dir = "file:///opt/flink/volume/flink-cp"
	}
	return fmt.Sprintf("%s/%s/chk-1", normalizeDir(dir), jobID)
}

// normalizeDir spells a local directory as Flink reports it (file:/path);
// object-store directories (s3://, gs://, hdfs://) are kept as they are.
func normalizeDir(dir string) string {
	if strings.Contains(dir, "://") && !strings.HasPrefix(dir, "file:") {
		return strings.TrimRight(dir, "/")
	}
	return "file:" + normalizePath(dir)
}

// configValue reads a key of spec.flinkConfiguration, spelled flat
// ("rest.port") or nested (rest: {port: …}), as Flink reads either.
func configValue(fd *unstructured.Unstructured, key string) string {
	conf, _, _ := unstructured.NestedFieldNoCopy(fd.Object, "spec", "flinkConfiguration")
	if v, ok := lookupConfig(conf, key); ok {
		return fmt.Sprint(v)
	}
	return ""
}

// lookupConfig finds key in node, the whole key first, then split at each
// dot into a nested map.
func lookupConfig(node any, key string) (any, bool) {
	m, ok := node.(map[string]any)
	if !ok {
		return nil, false
	}
	if v, ok := m[key]; ok {
		return v, true
	}
	for i := range len(key) {
		if key[i] != '.' {
			continue
		}
		if v, ok := lookupConfig(m[key[:i]], key[i+1:]); ok {
			return v, true
		}
	}
	return nil, false
}
