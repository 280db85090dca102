/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

package plane

import (
	"reflect"
	"testing"
)

// Options.APIServerArgs replace a flag given as two arguments or as one
// (--name=value), keep the others in order, and add the new ones sorted;
// an empty value is passed as one (to clear a list).
func TestAPIServerArgsReplaceFlagsOfTheSameName(t *testing.T) {
	args := []string{"--etcd-servers", "http://e", "--allow-privileged=true", "--disable-admission-plugins", "ServiceAccount",
		"--authorization-mode", "RBAC"}
	got := withArgs(args, map[string]string{"authorization-mode": "Node,RBAC", "disable-admission-plugins": "",
		"allow-privileged": "false", "service-cluster-ip-range": "10.96.0.0/24"})
	want := []string{"--etcd-servers", "http://e",
		"--allow-privileged=false", "--authorization-mode=Node,RBAC", "--disable-admission-plugins=", "--service-cluster-ip-range=10.96.0.0/24"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
