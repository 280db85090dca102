/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// person.go: person, who promotes or aborts the new colour of a Manual job
// and retries a job whose active FlinkDeployment was deleted, as the
// on-call engineer would.

package chaos

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// person promotes the new colour of a Manual job a few seconds after it
// waits for promotion, or aborts it instead (one time in seven), as the
// on-call engineer would with `bg-gitops promote|abort`. The choice is a
// function of the seed, the job and the commit: the same in every run.
// When a job's active FlinkDeployment was deleted by hand, the person runs
// `bg-gitops retry`, as the controller's message asks.
type person struct {
	e    *env
	tl   *timeline
	seed uint64

	mu      sync.Mutex
	waiting map[string]time.Time // job/target → first seen waiting
	acted   map[string]time.Time // job/target → last annotation
	counts  map[string]int       // promote, abort
}

// promotionDelay is how long the person takes to look; reactAgain is when
// an annotation that was not acted on (the controller was down) is set
// again.
const (
	promotionDelay = 3 * time.Second
	reactAgain     = 20 * time.Second
)

func newPerson(e *env, tl *timeline, seed uint64) *person {
	return &person{e: e, tl: tl, seed: seed, waiting: map[string]time.Time{}, acted: map[string]time.Time{}, counts: map[string]int{}}
}

func (p *person) consider(ctx context.Context, d *v1alpha1.FlinkBlueGreenDeployment) {
	if strings.Contains(d.Status.Error, activeMissing) {
		p.act(ctx, d, "retry", v1alpha1.RetryRequestedAtAnnotation, "missing@"+d.Status.ActiveDeployment)
		return
	}
	c := apimeta.FindStatusCondition(d.Status.Conditions, v1alpha1.ReconcilingCondition)
	if c == nil || c.Status != "True" || c.Reason != "WaitingForPromotion" {
		return
	}
	key := d.Namespace + "/" + d.Name + "@" + d.Status.TargetRevision
	verb, annotation := "promote", v1alpha1.PromoteRequestedAtAnnotation
	if p.aborts(key) {
		verb, annotation = "abort", v1alpha1.AbortRequestedAtAnnotation
	}
	p.act(ctx, d, verb, annotation, d.Status.TargetRevision)
}

// activeMissing is what the controller says when the active
// FlinkDeployment was deleted outside it.
const activeMissing = "is missing (deleted outside bg-gitops?)"

// act sets annotation on d once the situation (what) has lasted
// promotionDelay, and again every reactAgain while it lasts.
func (p *person) act(ctx context.Context, d *v1alpha1.FlinkBlueGreenDeployment, verb, annotation, what string) {
	key := d.Namespace + "/" + d.Name + "@" + what
	now := time.Now()
	p.mu.Lock()
	since, ok := p.waiting[key]
	if !ok {
		p.waiting[key], since = now, now
	}
	last, acted := p.acted[key]
	due := now.Sub(since) >= promotionDelay && (!acted || now.Sub(last) >= reactAgain)
	if due {
		p.acted[key] = now
	}
	p.mu.Unlock()
	if !due {
		return
	}
	if err := p.annotate(ctx, d, annotation, now); err != nil {
		p.tl.logf([]string{d.Namespace + "/" + d.Name}, "person: %s %s/%s failed: %v", verb, d.Namespace, d.Name, err)
		return
	}
	p.mu.Lock()
	p.counts[verb]++
	p.mu.Unlock()
	p.tl.logf([]string{d.Namespace + "/" + d.Name}, "person: %s %s/%s (%s)", verb, d.Namespace, d.Name, short(what))
}

// aborts decides, from the seed and the job and commit, to abort.
func (p *person) aborts(key string) bool {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return (h.Sum64()^p.seed)%7 == 0
}

func (p *person) annotate(ctx context.Context, d *v1alpha1.FlinkBlueGreenDeployment, key string, at time.Time) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		key: at.UTC().Format(time.RFC3339Nano)}}})
	if err != nil {
		return err
	}
	return p.e.c.Patch(ctx, d, client.RawPatch(types.MergePatchType, patch))
}

func (p *person) actions() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}
