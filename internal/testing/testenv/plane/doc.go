/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package plane runs etcd and kube-apiserver (from bin/, as testenv does)
// as separate processes that can be killed, paused and started again on
// the same data directory, ports and credentials: the control-plane faults
// of internal/testing/chaos, and the control plane of `bg-gitops dev`
// (internal/devenv), whose processes must die with it. testenv.Start
// (envtest) remains the control plane of ordinary tests; envtest cannot start a kube-apiserver again without
// minting new client credentials, and its processes have no parent-death
// signal.
//
// Credentials are fixed for the life of the directory: a self-signed
// serving certificate for 127.0.0.1, a static admin token (group
// system:masters) and a service-account signing key.
package plane
