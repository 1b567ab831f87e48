#!/bin/bash
# PID 1 of fresh pid/mount/cgroup/uts/ipc namespaces (started by tests/system/machine.py):
# turns them into a small machine of their own, then becomes systemd.
#
# The host's files are read-only in here: whatever systemd or the tests write lands in
# tmpfs (/run, /tmp, a private /dev, the cgroup mounts) or in the copy-on-write upper
# layer of /etc, /var, /opt, /root and /usr/local (where the install links jupcronctl),
# and vanishes with the namespaces. (Without this,
# systemd-tmpfiles at boot empties the host's /tmp, and enabled host units would start.)
set -euo pipefail

mount --make-rprivate /
mount -o remount,bind,ro /

mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
cow=/run/systest-cow
mkdir -m 0700 "$cow"
for dir in etc var opt root usr/local; do
  mkdir -p "$cow/$dir/upper" "$cow/$dir/work"
  mount -t overlay overlay \
    -o "lowerdir=/$dir,upperdir=$cow/$dir/upper,workdir=$cow/$dir/work" "/$dir"
done
# none of the host's enabled units (its PostgreSQL, timers, gettys): only what tests install
mount -t tmpfs -o mode=0755 tmpfs /etc/systemd/system

# a /dev of our own: a few device nodes of the host, our own ptys, shm and log socket
dev="$cow/dev"
mkdir "$dev"
mount -t tmpfs -o mode=0755,nosuid tmpfs "$dev"
for node in null zero full random urandom tty; do
  touch "$dev/$node"
  mount --bind "/dev/$node" "$dev/$node"
done
mkdir "$dev/pts" "$dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$dev/pts"
ln -s pts/ptmx "$dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$dev/shm"
ln -s /proc/self/fd "$dev/fd"
ln -s /proc/self/fd/0 "$dev/stdin"
ln -s /proc/self/fd/1 "$dev/stdout"
ln -s /proc/self/fd/2 "$dev/stderr"
mount --move "$dev" /dev

# kernel tunables and devices read-only (no host sysctl, no udev); cgroups rooted at the
# sub-cgroups machine.py made for us (the cgroup namespace makes them our root)
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
if [ -e /proc/sysrq-trigger ]; then
  mount --bind /proc/sysrq-trigger /proc/sysrq-trigger
  mount -o remount,bind,ro /proc/sysrq-trigger
fi
mount --bind /sys /sys
mount -o remount,bind,ro /sys
if [ "${SYSTEST_CGROUPS:-}" = unified ]; then
  mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup
else  # hybrid or legacy: systemd mounts the v1 controllers itself
  mount -t tmpfs -o mode=0755,nosuid,nodev,noexec tmpfs /sys/fs/cgroup
  mkdir /sys/fs/cgroup/systemd
  mount -t cgroup -o none,name=systemd,nosuid,nodev,noexec cgroup /sys/fs/cgroup/systemd
  if [ "${SYSTEST_CGROUPS:-}" = hybrid ]; then
    mkdir /sys/fs/cgroup/unified
    mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup/unified
  fi
fi

# shared propagation inside the machine, as on a host booted by systemd (it leaves this to
# a container manager): service namespaces rely on it, e.g. for $CREDENTIALS_DIRECTORY.
# Our mounts were made private first, so nothing propagates to the host.
mount --make-rshared /

unset SYSTEST_CGROUPS
export container=jupcron-systest
exec /lib/systemd/systemd --unit=multi-user.target
