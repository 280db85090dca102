/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops build`: the manifests a path of a Git repository renders to, as the
// controller renders them; renderAt, which diff and rollback render with too.

package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"bggitops.dev/bg-gitops/internal/render"
)

type buildFlags struct {
	repo             string
	ref              string
	path             string
	allowRemoteBases bool
}

func newBuildCommand() *cobra.Command {
	f := &buildFlags{}
	cmd := &cobra.Command{
		Use:   "build --repo DIR [--ref REF] --path PATH",
		Short: "Print the manifests a path of a repository renders to",
		Long: "Render PATH of the repository DIR with the controller's sandboxed kustomize build: the working\n" +
			"tree as it is, or any ref (branch, tag, SHA, refs/pull/N/head) read from the object store.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			objs, _, err := renderAt(f.repo, f.ref, f.path, f.allowRemoteBases)
			if err != nil {
				return err
			}
			out, err := render.EncodeYAML(objs)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", ".", "local Git repository (a checkout or a bare repository)")
	fl.StringVar(&f.ref, "ref", "", "render this ref instead of the working tree")
	fl.StringVar(&f.path, "path", "", "kustomization directory, relative to the repository root")
	fl.BoolVar(&f.allowRemoteBases, "allow-remote-bases", false, "allow kustomize remote bases and resources")
	_ = cmd.MarkFlagRequired("path")
	return cmd
}

// renderAt renders path of repo at ref, or of the working tree when ref is
// empty; it returns the commit SHA for a ref.
func renderAt(repo, ref, path string, allowRemote bool) ([]*unstructured.Unstructured, string, error) {
	// Local use: file:// bases read only what the user can read anyway.
	opts := render.Options{AllowRemoteBases: allowRemote, AllowFileURLs: allowRemote}
	if ref != "" {
		objs, sha, err := render.BuildRef(repo, ref, path, opts)
		if err != nil {
			return nil, "", fmt.Errorf("render %s at %s: %w", path, ref, err)
		}
		return objs, sha, nil
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return nil, "", err
	}
	objs, err := render.Build(abs, path, opts)
	if err != nil {
		return nil, "", fmt.Errorf("render %s: %w", path, err)
	}
	return objs, "", nil
}
