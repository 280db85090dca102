//go:build !nodev

/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// `bg-gitops dev`: a local environment (API server, Gitea, Flink operator
// simulator, controller) to try bg-gitops in; builds with the nodev tag leave it out.

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"bggitops.dev/bg-gitops/internal/devenv"
)

type devFlags struct {
	scenario bool
	exit     bool
	verbose  bool
}

func newDevCommand() *cobra.Command {
	f := &devFlags{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local environment: API server, Gitea, Flink operator simulator, controller (what make demo runs)",
		Long: `dev starts, under one temporary directory and on 127.0.0.1 only, a real
etcd + kube-apiserver, a real Gitea with a repository seeded from
examples/repo-layout, a push webhook to the bg-gitops receiver, the Flink
operator simulator and the bg-gitops controllers, and a GitRepository that
applies overlays/staging and writes commit statuses to Gitea.

--scenario walks through the story: first deployment, a new image rolled out
blue/green from a savepoint, a job that never becomes ready (aborted, the old
colour keeps running, a failure status on the commit), and the fix.

Without --exit it keeps running until Ctrl-C: it prints how to look around
and how to try a failure, then the timeline of every commit pushed to the
repository (yours too) and what it causes. Ctrl-C stops everything it
started and removes the temporary directory, and says so; so do SIGTERM,
SIGHUP and a closed standard output (the reader of a pipe gone).
Killed with SIGKILL it cannot clean up: etcd, kube-apiserver and Gitea die
with it (the kernel kills them), but the temporary directory
($TMPDIR/bg-gitops-dev-*) stays behind; remove it by hand.

The controller runs inside this process; it is published as the Deployment
bg-gitops-system/bg-gitops-controller (nothing runs its pods) so that
'bg-gitops check' and 'bg-gitops version' find it.
It needs kube-apiserver, etcd and gitea in bin/ ('make tools').`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDev(cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.scenario, "scenario", false, "walk through the demo story")
	fl.BoolVar(&f.exit, "exit", false, "exit when the story is done (non-zero if a step failed) instead of waiting for Ctrl-C")
	fl.BoolVar(&f.verbose, "verbose", false, "also print the controller's log")
	return cmd
}

func runDev(out io.Writer, f *devFlags) error {
	ctx, out, stop := devContext(out)
	defer stop()
	started := time.Now()
	opts := devenv.Options{Out: out, Version: cliVersion()}
	if f.verbose {
		opts.ControllerLog = os.Stderr
	}
	env, err := devenv.Start(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: 130, err: errors.New("interrupted")}
		}
		return fmt.Errorf("start the local environment: %w", err)
	}
	defer stopDev(out, env)
	env.Logf("environment ready in %.1fs", time.Since(started).Seconds())

	story := env.NewStory()
	var storyErr error
	if f.scenario {
		if storyErr = story.Run(ctx); storyErr != nil && ctx.Err() != nil {
			return &exitError{code: 130, err: errors.New("interrupted")}
		}
		if storyErr == nil {
			fmt.Fprintf(out, "\nthe story passed in %.1fs (including start-up)\n", time.Since(started).Seconds())
		}
	}
	if f.exit {
		return storyErr
	}
	printLookAround(out, env)
	if storyErr != nil {
		fmt.Fprintf(out, "\nthe story FAILED: %v\n(the environment keeps running so you can look; Ctrl-C to stop)\n", storyErr)
	}
	fmt.Fprintln(out, "\n── timeline of main: your pushes and what they cause (Ctrl-C stops)")
	story.Watch(ctx)
	return storyErr
}

// stopDev stops the environment; Stop prints each thing once it stopped.
func stopDev(out io.Writer, env *devenv.Env) {
	fmt.Fprintln(out, "\nstopping the local environment")
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop:", err)
	}
}

// lookAroundText is the text printed once the environment runs; %[n]s
// are the arguments of printLookAround.
const lookAroundText = `
── look around (Ctrl-C stops everything and removes %[1]s)

  export KUBECONFIG=%[2]s
  %[12]s get fbgd %[5]s -n %[4]s --watch   # the rollout as a tree, redrawn on each change
  %[12]s history fbgd %[5]s -n %[4]s       # its past rollouts
  %[12]s check   # the cluster, the CRDs, the controller
  %[3]s get bggr,fbgd -A

  Gitea       %[6]s   (login %[7]s / %[8]s)
  commits     %[6]s/%[9]s/commits/branch/main   (each with its sync and rollout statuses)
  logs        %[1]s/controller.log, %[1]s/gitea/gitea.log

  push a change yourself (a blue/green rollout from a savepoint, statuses on the commit):
    git clone %[10]s %[13]s
    sed -i 's/parallelism: 1/parallelism: 2/' %[13]s/%[11]s
    git -C %[13]s -c user.name=you -c user.email=you@example.invalid commit -qam "staging: parallelism 2"
    %[12]s diff --repo %[13]s --base origin/main --path %[14]s
    git -C %[13]s push
    %[12]s wait fbgd %[5]s -n %[4]s --for-revision $(git -C %[13]s rev-parse HEAD)

%[15]s`

func printLookAround(out io.Writer, env *devenv.Env) {
	g := env.Gitea
	clone := filepath.Join(env.Dir, devenv.RepoName)
	fmt.Fprintf(out, lookAroundText, env.Dir, env.Kube.Kubeconfig, shortPath(filepath.Join(env.BinDir, "kubectl")),
		devenv.JobNamespace, devenv.JobName, g.URL, g.AdminUser, g.AdminPassword, g.Repository(devenv.RepoName),
		g.AuthCloneURL(devenv.RepoName), devenv.PatchFile, selfPath(), clone, devenv.Overlay,
		devenv.TryAFailure("  ", clone+"/"+devenv.PatchFile))
}

// selfPath is how to run this binary again from the working directory.
func selfPath() string {
	exe, err := os.Executable()
	if err != nil {
		return "bg-gitops"
	}
	return shortPath(exe)
}

// shortPath is path relative to the working directory when it is below
// it (bin/kubectl), else path.
func shortPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !filepath.IsAbs(rel) && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// devCommands is `bg-gitops dev`, which a build with the nodev tag (the
// controller image) leaves out together with the test control plane,
// Gitea and the Flink operator simulator it runs.
func devCommands() []*cobra.Command { return []*cobra.Command{newDevCommand()} }
