/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package cluster runs a single-node Kubernetes that runs real pods on this
// machine: the control plane of testenv/plane (etcd, kube-apiserver) plus
// kube-controller-manager, kube-scheduler, containerd, kubelet and
// kube-proxy, as processes in one temporary directory, with a CNI bridge
// and the in-cluster API address (the kubernetes Service's ClusterIP,
// DNAT'd from the bridge to the API server on 127.0.0.1). It needs root,
// Debian's containerd, runc, CNI plugins and iptables, and kubelet,
// kube-scheduler and kube-proxy in bin/ (make tools).
//
// Everything it changes on the machine — mounts, cgroups, the bridge,
// network namespaces, iptables rules, sysctls, directories of containerd
// and the kubelet outside its own — is undone by one script, teardown.sh,
// which a watchdog process runs when Stop asks it to or when the test
// process dies however it dies (the watchdog reads a pipe from it).
// Cluster.Leftovers compares the machine with what it was before Start.
//
// One cluster runs on a machine at a time: Start holds an abstract Unix
// socket as a machine-wide lock, shared with the watchdog, so a second
// Start waits until the first cluster is gone.
package cluster
