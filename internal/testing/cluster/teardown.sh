#!/usr/bin/env bash
# Copyright 2026 The bg-gitops Authors.
# Licensed under the Apache License, Version 2.0.
#
# teardown.sh DIR: undoes what the test cluster in DIR changed on the
# machine, from what DIR/before recorded (see snapshot.go). The watchdog
# runs it when Stop asks or when the test process died; it may run after
# any step of Start, so every step tolerates what is not there.
set -u
W=$1
B=$W/before
log() { echo "teardown: $*"; }

# 1. The components (already stopped by Stop; after a crash killed by
#    their parent-death signal) and containerd's shims, by PID: every
#    process whose command line names DIR (a component's config, data or
#    socket is there; a shim's -address is containerd's socket), but this
#    script and the watchdog.
for i in 1 2 3 4 5; do
	# [/]: the pattern does not match grep's own command line.
	pids=$(grep -l -- "$W[/]" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 | grep -vxF -e "$$" -e "$PPID")
	[ -z "$pids" ] && break
	for pid in $pids; do
		log "kill $pid $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c1-120)"
		kill -9 "$pid" 2>/dev/null
	done
	sleep 0.2
done

# 2. The containers: every process in the kubepods cgroups.
for i in 1 2 3 4 5 6 7 8 9 10; do
	pids=$(cat /sys/fs/cgroup/*/kubepods/cgroup.procs /sys/fs/cgroup/*/kubepods/*/cgroup.procs \
		/sys/fs/cgroup/*/kubepods/*/*/cgroup.procs /sys/fs/cgroup/*/kubepods/*/*/*/cgroup.procs 2>/dev/null | sort -u)
	[ -z "$pids" ] && break
	kill -9 $pids 2>/dev/null
	sleep 0.2
done

# 3. kube-proxy's rules: with the kubelet's, in 7 (kube-proxy --cleanup
#    would remove those of a kube-proxy the machine ran before too).

# 4. Mounts under DIR and the network namespaces containerd pinned in
#    /run/netns (cni-*; another's namespace there is not ours), deepest
#    first; /run/containerd's only when it was not there before.
awk '{print $5}' /proc/self/mountinfo | grep -E "^($W/|/run/netns/cni-|/run/containerd/)" | sort -r | while read -r m; do
	case "$m" in
	/run/netns/*) grep -qxF "$(basename "$m")" "$B/netns" 2>/dev/null && continue ;;
	/run/containerd/*) grep -qxF /run/containerd "$B/paths" 2>/dev/null && continue ;;
	esac
	umount "$m" 2>/dev/null || umount -l "$m" || log "umount $m failed"
done
for n in /run/netns/cni-*; do
	[ -e "$n" ] || continue
	grep -qxF "$(basename "$n")" "$B/netns" 2>/dev/null || rm -f "$n"
done

# 5. The bridge (the pods' veths went with their namespaces).
[ -e "/sys/class/net/$(cat "$B/bridge")" ] && ip link del "$(cat "$B/bridge")"

# 6. The kubelet's cgroups, depth first (none existed: Start checks).
for h in /sys/fs/cgroup/*/kubepods; do
	[ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
	[ -d "$h" ] && log "cgroup $h left"
done

# 7. iptables and ip6tables: what the cluster added removed — the rules
#    of Start and ReachFromPods (comment bg-gitops-test-), the chains of
#    the kubelet and kube-proxy (KUBE-*) and the rules that jump to them —
#    unless the line was there before; what others added while the
#    cluster ran is kept. The tables that did not exist before emptied
#    (iptables-nft cannot delete a table).
for t in iptables ip6tables; do
	[ -f "$B/$t" ] || continue
	"$t-save" | awk -v before="$B/$t" '
		function norm(l) { gsub(/ \[[0-9]+:[0-9]+\]/, "", l); return l }
		BEGIN { while ((getline l <before) > 0) { if (l ~ /^\*/) tb = l; was[tb SUBSEP norm(l)] = 1 } }
		/^\*/ { tb = $0 }
		!was[tb SUBSEP norm($0)] && (/bg-gitops-test-/ || /^:KUBE-/ || /^-A KUBE-/ || /-[jg] KUBE-/) { next }
		{ print }' >"$W/$t.after" && "$t-restore" <"$W/$t.after"
	for table in $("$t-save" | sed -n 's/^\*//p'); do
		grep -qx "\*$table" "$B/$t" && continue
		"$t" -t "$table" -F && "$t" -t "$table" -X
	done
done

# 8. sysctls, as they were.
while read -r k v; do
	[ -n "$k" ] && sysctl -q -w "$k=$v" >/dev/null
done <"$B/sysctl"

# 9. Directories outside DIR that containerd, runc, CNI or the kubelet
#    created; /run/netns only when nobody else's namespace is in it.
while read -r p; do
	[ -e "$p" ] && ! grep -qxF "$p" "$B/paths" || continue
	case "$p" in
	/run/netns) rmdir "$p" 2>/dev/null || log "$p kept: $(ls "$p" | tr '\n' ' ')" ;;
	*) rm -rf "$p" ;;
	esac
done <"$B/watched"
exit 0
