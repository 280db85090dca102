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

# mine PID: the process's command line names DIR (every component's does:
# its config, data or socket is in DIR), so a reused PID is left alone.
mine() { [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "$W/"; }

# 1. The components (already stopped by Stop; after a crash killed by
#    their parent-death signal) and containerd's shims (whose command
#    line names the socket in DIR), by PID.
for i in 1 2 3 4 5; do
	found=
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		case $pid in $$ | $PPID) continue ;; esac
		mine "$pid" && { found=1; log "kill $pid $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-120)"; kill -9 "$pid" 2>/dev/null; }
	done
	[ -z "$found" ] && break
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

# 3. kube-proxy's rules.
kp=$(cat "$B/kube-proxy" 2>/dev/null)
[ -x "$kp" ] && "$kp" --cleanup >/dev/null 2>&1

# 4. Mounts under DIR and the network namespaces containerd pinned in
#    /run/netns, deepest first.
awk '{print $5}' /proc/self/mountinfo | grep -E "^($W/|/run/netns/|/run/containerd/)" | sort -r | while read -r m; do
	case "$m" in /run/netns/*) grep -qxF "$(basename "$m")" "$B/netns" 2>/dev/null && continue ;; esac
	umount "$m" 2>/dev/null || umount -l "$m" || log "umount $m failed"
done
for n in /run/netns/*; do
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

# 7. iptables and ip6tables: the tables that existed as they were; the
#    others emptied (iptables-nft cannot delete a table).
for t in iptables ip6tables; do
	[ -f "$B/$t" ] || continue
	[ -s "$B/$t" ] && "$t-restore" <"$B/$t"
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
#    created.
while read -r p; do
	[ -e "$p" ] && ! grep -qxF "$p" "$B/paths" && rm -rf "$p"
done <"$B/watched"
exit 0
