/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package devenv is the embedded local environment behind `bg-gitops dev`
// (and so `make demo`) and the end-to-end suite in test/e2e: one story,
// written once, that both a newcomer and CI run.
//
// Start brings up, under one temporary directory and only on 127.0.0.1, a
// real etcd + kube-apiserver with our CRDs and the Flink test CRDs, a real
// Gitea with an admin user, an API token and a repository seeded from
// examples/repo-layout, the Flink operator simulator, the bg-gitops
// controllers with their push webhook receiver, a Gitea push webhook to that
// receiver, and the GitRepository that points at the repository (commit
// statuses to Gitea, webhook secret, 1m polling as the fallback;
// Options.GitInterval changes it). etcd, kube-apiserver (testenv/plane) and
// Gitea run with a parent-death signal: they die with this process even
// when it is SIGKILLed. The in-process controller is published as the
// Deployment bg-gitops-system/bg-gitops-controller, so that `bg-gitops
// check` and `version` find it. Stop stops everything it started, by PID,
// prints what it stopped, and removes the directory.
//
// Story.Watch goes on printing the timeline for every commit pushed to
// the repository, by the story or by a person.
//
// Story walks the four steps of the demo (first deployment, a new image
// rolled out blue/green from a savepoint, a job that never becomes ready and
// is aborted, the fix), printing a timeline of what the cluster and the
// forge show, and measures the time from git push to the start of the
// rollout and to its success commit status.
package devenv
