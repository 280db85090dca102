/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// snapshot.go: the machine before a cluster starts, and Leftovers, what a
// cluster left behind compared to it.

package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

// sysctls are those the kubelet (its kernel defaults), the bridge plugin
// (forwarding) and the in-cluster API address (route_localnet) set.
var sysctls = []string{
	"net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding", "net.ipv6.conf.all.forwarding",
	"net.ipv4.conf.all.route_localnet", "net.ipv4.conf.default.route_localnet",
	"vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
	"kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes",
}

// watched are the paths outside the cluster's directory that containerd,
// runc, the CNI plugins, iptables or the kubelet create.
var watched = []string{
	"/run/containerd", "/run/netns", "/run/runc", "/run/xtables.lock", "/var/lib/cni", "/var/lib/containerd",
	"/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/opt/containerd", "/etc/cni",
}

// snapshot is what the machine looked like before Start changed it.
type snapshot struct {
	Sysctls  map[string]string
	IPTables map[string]string // iptables-save and ip6tables-save, normalized
	Paths    map[string]bool   // the watched paths that existed
	Netns    []string          // the entries of /run/netns
}

// takeSnapshot records the machine and writes what teardown.sh reads to
// dir/before.
func takeSnapshot(dir, bridge, kubeProxy string) (*snapshot, error) {
	s := &snapshot{Sysctls: map[string]string{}, IPTables: map[string]string{}, Paths: map[string]bool{}}
	b := filepath.Join(dir, "before")
	if err := os.MkdirAll(b, 0o700); err != nil {
		return nil, err
	}
	var sys []string
	for _, k := range sysctls {
		v, err := readSysctl(k)
		if err != nil {
			continue // not on this kernel
		}
		s.Sysctls[k] = v
		sys = append(sys, k+" "+v)
	}
	files := map[string]string{"sysctl": strings.Join(sys, "\n") + "\n", "bridge": bridge, "kube-proxy": kubeProxy,
		"watched": strings.Join(watched, "\n") + "\n"}
	for _, t := range []string{"iptables", "ip6tables"} {
		out, err := exec.Command(t + "-save").Output()
		if err != nil {
			return nil, fmt.Errorf("%s-save: %w", t, err)
		}
		files[t] = string(out)
		s.IPTables[t] = normalizeIPTables(string(out))
	}
	var paths []string
	for _, p := range watched {
		if _, err := os.Lstat(p); err == nil {
			s.Paths[p] = true
			paths = append(paths, p)
		}
	}
	files["paths"] = strings.Join(paths, "\n") + "\n"
	s.Netns = readDirNames("/run/netns")
	files["netns"] = strings.Join(s.Netns, "\n") + "\n"
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(b, name), []byte(data), 0o600); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Leftovers lists what a cluster in dir left on the machine compared to
// s: processes naming dir, mounts under it, the bridge, network
// namespaces, kubepods cgroups, iptables rules and chains, sysctls and
// paths. Empty when everything was restored.
func (s *snapshot) Leftovers(dir, bridge string) []string {
	var out []string
	for _, pid := range readDirNames("/proc") {
		cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err == nil && strings.Contains(string(cmdline), dir+"/") {
			out = append(out, fmt.Sprintf("process %s: %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
				out = append(out, "mount "+f[4])
			}
		}
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", bridge)); err == nil {
		out = append(out, "bridge "+bridge)
	}
	before := map[string]bool{}
	for _, n := range s.Netns {
		before[n] = true
	}
	for _, n := range readDirNames("/run/netns") {
		if !before[n] {
			out = append(out, "network namespace /run/netns/"+n)
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	for _, c := range cgroups {
		out = append(out, "cgroup "+c)
	}
	for t, was := range s.IPTables {
		b, err := exec.Command(t + "-save").Output()
		if err != nil {
			out = append(out, fmt.Sprintf("%s-save: %v", t, err))
			continue
		}
		if now := normalizeIPTables(string(b)); now != was {
			out = append(out, fmt.Sprintf("%s rules differ; before:\n%s\nnow:\n%s", t, was, now))
		}
	}
	for k, was := range s.Sysctls {
		if now, err := readSysctl(k); err == nil && now != was {
			out = append(out, fmt.Sprintf("sysctl %s = %s, was %s", k, now, was))
		}
	}
	for _, p := range watched {
		if _, err := os.Lstat(p); err == nil && !s.Paths[p] {
			out = append(out, "path "+p)
		}
	}
	sort.Strings(out)
	return out
}

var (
	counters  = regexp.MustCompile(`\[\d+:\d+\]`)
	emptyBase = regexp.MustCompile(`^:(INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) ACCEPT$`)
)

// normalizeIPTables drops comments, counters and the tables that hold
// nothing but built-in chains accepting everything (iptables-nft keeps a
// table it emptied).
func normalizeIPTables(save string) string {
	var out, table []string
	empty := true
	for _, line := range strings.Split(save, "\n") {
		line = strings.TrimSpace(counters.ReplaceAllString(line, ""))
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "*"):
			table, empty = []string{line}, true
		case line == "COMMIT":
			if !empty {
				out = append(out, append(table, line)...)
			}
		default:
			table = append(table, line)
			if !emptyBase.MatchString(line) {
				empty = false
			}
		}
	}
	return strings.Join(out, "\n")
}

func readSysctl(key string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/")))
	return strings.TrimSpace(string(b)), err
}

func readDirNames(dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// isRoot: the cluster mounts, creates cgroups, bridges and iptables rules.
func isRoot() bool { return syscall.Geteuid() == 0 }

var errNotRoot = errors.New("the test cluster needs root")
