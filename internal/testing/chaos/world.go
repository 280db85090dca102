/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// world.go: world, what the API server shows at one moment, and readWorld.

package chaos

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/api/v1alpha1"
)

// world is what the API server shows at one moment.
type world struct {
	at       time.Time
	fbgds    map[string]*v1alpha1.FlinkBlueGreenDeployment // by namespace/name
	children []unstructured.Unstructured
	repos    map[string]*v1alpha1.GitRepository // by repository name
}

// readWorld reads the jobs, their children and the GitRepositories, trying
// for up to a minute while the API server is away.
func (c *checker) readWorld(ctx context.Context) (*world, error) {
	var err error
	for try := 0; try < 30; try++ {
		var w *world
		if w, err = c.readOnce(ctx); err == nil {
			return w, nil
		}
		if !sleep(ctx, 2*time.Second) {
			break
		}
	}
	return nil, err
}

func (c *checker) readOnce(ctx context.Context) (*world, error) {
	w := &world{at: time.Now(), fbgds: map[string]*v1alpha1.FlinkBlueGreenDeployment{}, repos: map[string]*v1alpha1.GitRepository{}}
	fl := &v1alpha1.FlinkBlueGreenDeploymentList{}
	if err := c.e.c.List(ctx, fl); err != nil {
		return nil, err
	}
	for i := range fl.Items {
		w.fbgds[fl.Items[i].Namespace+"/"+fl.Items[i].Name] = &fl.Items[i]
	}
	children := &unstructured.UnstructuredList{}
	children.SetGroupVersionKind(v1alpha1.FlinkDeploymentGVK)
	if err := c.e.c.List(ctx, children); err != nil {
		return nil, err
	}
	w.children = children.Items
	grs := &v1alpha1.GitRepositoryList{}
	if err := c.e.c.List(ctx, grs); err != nil {
		return nil, err
	}
	for i := range grs.Items {
		w.repos[grs.Items[i].Name] = &grs.Items[i]
	}
	return w, nil
}
