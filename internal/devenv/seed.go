/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// seed.go: the names of the demo (repository, overlay, namespaces, objects)
// and the seed files copied from examples/repo-layout, with shortened timers.

package devenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The seeded repository and the objects it leads to.
const (
	// RepoName is the Gitea repository, owned by the admin user.
	RepoName = "fraud-detection"
	// Overlay is the kustomize path the GitRepository applies.
	Overlay = "overlays/staging"
	// SourceNamespace holds the GitRepository and its Secrets.
	SourceNamespace = "flink-system"
	// GitRepositoryName is the GitRepository's name.
	GitRepositoryName = "fraud-detection-staging"
	// JobNamespace is where the staging overlay puts the job.
	JobNamespace = "flink-staging"
	// JobName is the FlinkBlueGreenDeployment of examples/repo-layout.
	JobName = "state-machine"

	// PatchFile is the overlay file the story edits, as a user would.
	PatchFile = Overlay + "/flinkbluegreendeployment-patch.yaml"
	// TimersFile is the patch the seed adds so that rollouts take seconds.
	TimersFile = Overlay + "/demo-timers-patch.yaml"
)

// timersPatch shortens the abort grace period and the savepoint timeout of
// the staging overlay, so that the aborted rollout of the story ends in
// seconds rather than minutes. Everything else reacts to events (webhook,
// child and snapshot status), so the overlay's other timers stay as they are.
const timersPatch = `# Added by bg-gitops dev: demo timers, so that a rollout takes seconds.
apiVersion: bggitops.dev/v1alpha1
kind: FlinkBlueGreenDeployment
metadata:
  name: state-machine
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "%s"
    bggitops.dev/savepoint-timeout: "20 s"
`

// seedFiles reads examples/repo-layout and adds the demo timers patch to
// the staging overlay.
func seedFiles(dir, gracePeriod string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	kust := Overlay + "/kustomization.yaml"
	k, ok := files[kust]
	if !ok || !strings.Contains(k, "\npatches:\n") || !strings.HasSuffix(k, "\n") {
		return nil, fmt.Errorf("%s/%s: want a kustomization ending with its patches list", dir, kust)
	}
	if _, ok := files[PatchFile]; !ok {
		return nil, fmt.Errorf("%s/%s is missing", dir, PatchFile)
	}
	files[kust] = k + "  - path: " + filepath.Base(TimersFile) + "\n"
	files[TimersFile] = fmt.Sprintf(timersPatch, gracePeriod)
	return files, nil
}

// examplesDir finds examples/repo-layout: below the module root found from
// the working directory, else from this source file (a binary built here
// and run from elsewhere on the same machine).
func examplesDir() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, start := range starts {
		if root := moduleRoot(start); root != "" {
			return filepath.Join(root, "examples", "repo-layout"), nil
		}
	}
	return "", fmt.Errorf("examples/repo-layout not found: run from the bg-gitops repository")
}

func moduleRoot(dir string) string {
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module bggitops.dev/bg-gitops\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
