/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package chaos is the fault soak behind `make chaos` (issue 17): the
// whole system as separate processes — etcd and kube-apiserver
// (testenv/plane), Gitea, a `git http-backend` server, the Flink operator
// simulator and two `bg-gitops controller` replicas with leader election —
// while a driver keeps pushing commits of every kind to two repositories of
// four FlinkBlueGreenDeployments, and a nemesis kills, pauses, stops, slows
// and tampers at random. A checker reads the world after every fault and
// at the end (API server, Gitea's commit statuses, the simulator's lineage
// journal) and holds the rollout promises of
// docs/spec/v1alpha1/flinkbluegreendeployments.md to it; Run returns
// the figures that results.md reports.
//
// The seed fixes the schedule: which commits are pushed, in which order,
// with which content and commit dates (so the same SHAs), which faults are
// injected and with which parameters, and when each is due. The timing of
// the real processes is not reproducible, so neither is what a fault hits.
//
// Every process is started by PID in its own process group with a
// parent-death signal (testenv/process) and killed with its group when Run
// returns, however the run ends; the leaks left are counted.
//
// TestShortSoak is the variant in make test (150 s, a fixed seed).
// commitstatus_sequences_test.go pins each violation a soak found as a test of its
// own, next to the fix.
package chaos
