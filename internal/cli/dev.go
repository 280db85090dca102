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

Without --exit it keeps running until Ctrl-C and prints how to look around;
Ctrl-C stops everything it started and removes the temporary directory;
so do SIGTERM, SIGHUP and a closed standard output (the reader of a pipe gone).
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
	opts := devenv.Options{Out: out}
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
	defer func() {
		fmt.Fprintln(out, "\nstopping: controller, gitea, kube-apiserver, etcd; removing", env.Dir)
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop:", err)
		}
	}()
	env.Logf("environment ready in %.1fs", time.Since(started).Seconds())

	var storyErr error
	if f.scenario {
		storyErr = env.NewStory().Run(ctx)
		if storyErr != nil && ctx.Err() != nil {
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
	<-ctx.Done()
	return storyErr
}

func printLookAround(out io.Writer, env *devenv.Env) {
	kubectl := filepath.Join(env.Kube.BinDir, "kubectl")
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, kubectl); err == nil && !filepath.IsAbs(rel) && len(rel) < len(kubectl) {
			kubectl = rel
		}
	}
	g := env.Gitea
	fmt.Fprintf(out, `
── look around (Ctrl-C stops everything and removes %[1]s)

  export KUBECONFIG=%[2]s
  %[3]s get bggr,fbgd -A
  %[3]s get flinkdeployments,flinkstatesnapshots -n %[4]s
  %[3]s describe fbgd %[5]s -n %[4]s

  Gitea       %[6]s   (login %[7]s / %[8]s)
  commits     %[6]s/%[9]s/commits/branch/main   (each with its sync and rollout statuses)
  logs        %[1]s/controller.log, %[1]s/gitea/gitea.log

  push a change yourself (a blue/green rollout from a savepoint, statuses on the commit):
    git clone %[10]s /tmp/fraud-detection
    sed -i 's/parallelism: 1/parallelism: 2/' /tmp/fraud-detection/%[11]s
    git -C /tmp/fraud-detection -c user.name=you -c user.email=you@example.invalid commit -qam "staging: parallelism 2"
    git -C /tmp/fraud-detection push
    %[3]s get fbgd -n %[4]s -w
`, env.Dir, env.Kube.Kubeconfig, kubectl, devenv.JobNamespace, devenv.JobName,
		g.URL, g.AdminUser, g.AdminPassword, g.Repository(devenv.RepoName), g.AuthCloneURL(devenv.RepoName), devenv.PatchFile)
}

// devCommands is `bg-gitops dev`, which a build with the nodev tag (the
// controller image) leaves out together with the test control plane,
// Gitea and the Flink operator simulator it runs.
func devCommands() []*cobra.Command { return []*cobra.Command{newDevCommand()} }
