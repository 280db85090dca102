/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops version`: the version of this binary and of the controllers in the
// cluster.

package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"bggitops.dev/bg-gitops/internal/manager"
)

// Version is set at build time with
// -ldflags "-X bggitops.dev/bg-gitops/internal/cli.Version=..." (make build,
// the Dockerfile).
var Version = "dev"

// controllerLabel selects the controller's Deployment: config/default and
// charts/bg-gitops both label it so.
const controllerLabel, controllerLabelValue = manager.NameLabel, manager.NameLabelValue

// versionTimeout bounds the look-up of the controller when the kubeconfig
// sets no timeout, so `version` answers even when the cluster does not.
const versionTimeout = 10 * time.Second

func newVersionCommand() *cobra.Command {
	kf := newKubeFlags()
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the CLI's version and the controller's",
		Long: `Print the version of this binary and, when the cluster of the kubeconfig can
be reached, the controller's: the image tag of each Deployment labelled
` + controllerLabel + "=" + controllerLabelValue + ` in any namespace (config/default and
the Helm chart label it so; make image tags the image with the version it
stamps into the binary). Listing Deployments needs list on deployments in
all namespaces; without it, or without a cluster, the controller line says
why it is not known. The exit code is 0 either way.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "bg-gitops:", cliVersion())
			if clientOnly {
				return nil
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			printControllerVersions(ctx, out, kf)
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print only this binary's version; do not contact the cluster")
	kf.addFlags(cmd.Flags())
	return cmd
}

// cliVersion is the stamped version, else the module version Go recorded
// (go install bggitops.dev/bg-gitops/cmd/bg-gitops@v0.1.0), else "dev".
func cliVersion() string {
	if Version != "dev" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return Version
}

func printControllerVersions(ctx context.Context, out io.Writer, kf *kubeFlags) {
	lines, err := controllerVersions(ctx, kf)
	switch {
	case err != nil:
		fmt.Fprintf(out, "controller: not reachable (%v)\n", err)
	case len(lines) == 0:
		fmt.Fprintf(out, "controller: not found (no Deployment labelled %s=%s in any namespace)\n",
			controllerLabel, controllerLabelValue)
	}
	for _, l := range lines {
		fmt.Fprintln(out, "controller:", l)
	}
}

// controllerVersions describes every controller Deployment, sorted by
// namespace and name.
func controllerVersions(ctx context.Context, kf *kubeFlags) ([]string, error) {
	cfg, err := kf.restConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = versionTimeout
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.MatchingLabels{controllerLabel: controllerLabelValue}); err != nil {
		return nil, fmt.Errorf("list deployments: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	var lines []string
	for i := range list.Items {
		lines = append(lines, describeController(&list.Items[i]))
	}
	return lines, nil
}

// describeController says which version a controller Deployment runs:
// "v0.1.0 (image bg-gitops:v0.1.0, deployment bg-gitops-system/bg-gitops-controller, 1/1 ready)".
func describeController(d *appsv1.Deployment) string {
	image := controllerImage(d)
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return fmt.Sprintf("%s (image %s, deployment %s/%s, %d/%d ready)",
		imageVersion(image), image, d.Namespace, d.Name, d.Status.ReadyReplicas, want)
}

// controllerImage is the image of the container named "controller", else
// of the first container.
func controllerImage(d *appsv1.Deployment) string {
	cs := d.Spec.Template.Spec.Containers
	for _, c := range cs {
		if c.Name == "controller" {
			return c.Image
		}
	}
	if len(cs) > 0 {
		return cs[0].Image
	}
	return ""
}

// imageVersion is the tag of an image reference, else its digest, else
// "unknown": registry:5000/bg-gitops:v0.1.0 → v0.1.0.
func imageVersion(image string) string {
	name, digest, hasDigest := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[i+1:]
	}
	if hasDigest {
		return digest
	}
	return "unknown"
}
