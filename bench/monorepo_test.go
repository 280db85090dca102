//go:build bench

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// monorepo_test.go: the monorepo scenario, K paths of one repository:
// bg-gitops with K GitRepositories of one URL, Flux with its idiom of one
// GitRepository and K Kustomizations.

package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

const (
	monoRepo    = "mono"
	monoSection = "§7 monorepo: K paths of one repository"
)

// monoKs are the path counts of the scenario (BENCH_MONO_K, default 1,10,100).
func monoKs() []int {
	ks := []int{1, 10, 100}
	if v := os.Getenv("BENCH_MONO_K"); v != "" {
		ks = nil
		for _, f := range strings.Split(v, ",") {
			if k, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && k > 0 {
				ks = append(ks, k)
			}
		}
	}
	return ks
}

func teamPath(j int) string { return fmt.Sprintf("team%03d", j) }

// monoFiles are the k paths of the monorepo, each a kustomization of three
// ConfigMaps named after its path.
func monoFiles(k int, value string) map[string]string {
	files := map[string]string{}
	for j := range k {
		p := teamPath(j)
		files[p+"/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml, b.yaml, c.yaml]\n"
		for _, n := range []string{"a", "b", "c"} {
			files[p+"/"+n+".yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-%s}\ndata: {key: %q}\n", p, n, value)
		}
	}
	return files
}

// monoGitRepository is bg-gitops's GitRepository of path j of the monorepo.
func monoGitRepository(ns string, j int, url string) *v1alpha1.GitRepository {
	gr := gitRepository(ns, j, url, nil)
	gr.Name, gr.Spec.Path = teamPath(j), "./"+teamPath(j)
	return gr
}

// monoFluxObjects are Flux's one GitRepository and the Kustomization of
// each of the k paths.
func monoFluxObjects(ns string, k int, url string) []client.Object {
	gr, _ := fluxObjects(ns, 0, url)
	gr.SetName(monoRepo)
	objs := []client.Object{gr}
	for j := range k {
		_, ks := fluxObjects(ns, j, url)
		ks.SetName(teamPath(j))
		_ = unstructured.SetNestedField(ks.Object, "./"+teamPath(j), "spec", "path")
		_ = unstructured.SetNestedField(ks.Object, monoRepo, "spec", "sourceRef", "name")
		objs = append(objs, ks)
	}
	return objs
}

// monorepoPhase measures, per K: creation → all K applied, the git
// requests it took, the git requests per idle minute, and one push with
// one reconcile request (what a push webhook to one object does) → all K
// applied. Flux runs the same K after bg-gitops, with its own controllers.
func (w *world) monorepoPhase(t *testing.T) {
	ks := monoKs()
	maxK := 0
	for _, k := range ks {
		maxK = max(maxK, k)
	}
	w.git.commit(t, monoRepo, monoFiles(maxK, "v0"), "initial")
	url := w.git.URL + "/" + monoRepo + ".git"
	w.rep.Workload["monorepo"] = fmt.Sprintf("one repository (%s) with K paths of a kustomization of 3 ConfigMaps each; bg-gitops: K GitRepositories (interval 1m, path ./teamNNN); Flux: one GitRepository and K Kustomizations; K = %v, one round each", w.git.name(), ks)
	p := w.startController(t, "mono", controllerArgs{leaderElect: true, leaseNS: leaseNS})
	w.waitLeader(t, leaseNS)
	for _, k := range ks {
		ns := fmt.Sprintf("mono-k%d", k)
		w.namespace(t, ns)
		w.monoRound(t, "mono", k, ns, func() {
			var wg sync.WaitGroup
			for j := range k {
				wg.Go(func() {
					if err := w.c.Create(context.Background(), monoGitRepository(ns, j, url)); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}, func(tr *tracker, rev string) bool {
			for j := range k {
				gr := tr.gr(ns, teamPath(j))
				if !ready(gr) || rev != "" && gr.Status.LastAppliedRevision != rev {
					return false
				}
			}
			return true
		}, func(at string) { w.requestReconcile(t, ns, teamPath(0), at) })
		w.deleteAll(t, ns)
	}
	p.stop(syscall.SIGTERM)
	if w.s.fluxNotRun != "" {
		return
	}
	src, kus := w.startFlux(t, "mono")
	for _, k := range ks {
		ns := fmt.Sprintf("flux-mono-k%d", k)
		w.namespace(t, ns)
		w.monoRound(t, "flux-mono", k, ns, func() {
			for _, o := range monoFluxObjects(ns, k, url) {
				if err := w.c.Create(context.Background(), o); err != nil {
					t.Error(err)
				}
			}
		}, func(tr *tracker, rev string) bool {
			for j := range k {
				if !fluxReady(tr, ns, teamPath(j), rev) {
					return false
				}
			}
			return true
		}, func(at string) {
			gr := &unstructured.Unstructured{}
			gr.SetGroupVersionKind(fluxGitRepositoryGVK)
			gr.SetNamespace(ns)
			gr.SetName(monoRepo)
			patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, fluxRequestedAt, at))
			if err := w.c.Patch(context.Background(), gr, client.RawPatch("application/merge-patch+json", patch)); err != nil {
				t.Error(err)
			}
		})
		w.fluxDeleteAll(t, ns)
	}
	kus.stop(syscall.SIGTERM)
	src.stop(syscall.SIGTERM)
}

// monoRound is one K of one controller: create, wait for all applied
// (applied(tr, "")), the idle window, then a commit to every path and
// one reconcile request (ask) → all applied at the new revision.
func (w *world) monoRound(t *testing.T, id string, k int, ns string, create func(), applied func(*tracker, string) bool, ask func(at string)) {
	ctx := context.Background()
	flux := strings.HasPrefix(id, "flux")
	who := "bg-gitops, K GitRepositories"
	if flux {
		who = "Flux, one GitRepository and K Kustomizations"
	}
	label := fmt.Sprintf("K=%d, %s", k, who)
	g0, start := w.git.busy(), time.Now()
	create()
	end, err := w.tr.waitFor(ctx, 10*time.Minute, fmt.Sprintf("%s: all %d paths applied", label, k), func(tr *tracker) bool { return applied(tr, "") })
	if err != nil {
		t.Fatal(err)
	}
	g1 := w.git.busy()
	w.monoFigure(id+"-create-k", k, "creation → all K paths applied, "+label, "s", end.Sub(start).Seconds(), "")
	w.monoFigure(id+"-create-git-k", k, "git requests for the creation, "+label, "requests", float64(g1.lists-g0.lists+g1.packs-g0.packs),
		fmt.Sprintf("%d ref listings, %d upload-packs", g1.lists-g0.lists, g1.packs-g0.packs))

	time.Sleep(5 * time.Second)
	l0, u0 := w.git.counts()
	from := time.Now()
	time.Sleep(w.s.idle)
	l1, u1 := w.git.counts()
	perMin := time.Minute.Seconds() / time.Since(from).Seconds()
	w.monoFigure(id+"-idle-git-k", k, "git requests per idle minute, "+label, "requests", float64(l1-l0+u1-u0)*perMin,
		fmt.Sprintf("%.0f ref listings, %.0f upload-packs per minute (interval 1m)", float64(l1-l0)*perMin, float64(u1-u0)*perMin))

	sha := w.git.commit(t, monoRepo, monoFiles(k, fmt.Sprintf("push-%d", time.Now().UnixNano())), "change every path")
	rev := "main@sha1:" + sha
	g2, start := w.git.busy(), time.Now()
	ask(start.Format(time.RFC3339Nano))
	end, err = w.tr.waitFor(ctx, 3*time.Minute, fmt.Sprintf("%s: all %d paths at %s", label, k, rev), func(tr *tracker) bool { return applied(tr, rev) })
	if err != nil {
		t.Fatal(err)
	}
	g3 := w.git.busy()
	w.monoFigure(id+"-push-k", k, "one push + one reconcile request → all K paths applied, "+label, "s", end.Sub(start).Seconds(),
		fmt.Sprintf("%d ref listings, %d upload-packs until then; the request goes to one object (bg-gitops: the first path's GitRepository, as a push webhook configured on it; Flux: its GitRepository)", g3.lists-g2.lists, g3.packs-g2.packs))
}

func (w *world) monoFigure(prefix string, k int, name, unit string, v float64, note string) {
	f := figure{ID: fmt.Sprintf("%s%d", prefix, k), Section: monoSection, Name: name, Unit: unit, Samples: []float64{v}, Note: note}
	if rest, ok := strings.CutPrefix(prefix, "flux-"); ok {
		f.Compare = []string{fmt.Sprintf("%s%d", rest, k)}
	}
	w.rep.add(f)
}
