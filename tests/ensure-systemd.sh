#!/usr/bin/env bash
# Makes sure systemd (the manager, systemctl, journalctl, systemd-run, systemd-creds) is on
# this machine for tests/system; installs Debian's systemd package if not.
# --optional: when it cannot be had, say why and exit 0 (the suite then skips, with the reason).
set -euo pipefail
optional=false
[ "${1:-}" = --optional ] && optional=true
give_up() {
  echo "tests/system: $1" >&2
  if $optional; then exit 0; fi
  exit 1
}
have_all() {
  [ -x /lib/systemd/systemd ] || [ -x /usr/lib/systemd/systemd ] || return 1
  for tool in systemctl journalctl systemd-run systemd-creds unshare nsenter setpriv; do
    command -v "$tool" >/dev/null || return 1
  done
}
have_all && exit 0
[ "$(uname -s)" = Linux ] || give_up "not Linux: no systemd to boot"
[ "$(id -u)" = 0 ] || give_up "systemd is missing and we are not root: apt-get install systemd"
command -v apt-get >/dev/null || give_up "systemd is missing and this is not Debian (no apt-get)"
echo "systemd is missing: installing Debian's systemd package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || give_up "apt-get update failed"
apt-get install -y -qq --no-install-recommends systemd util-linux >/dev/null \
  || give_up "apt-get install systemd failed"
have_all || give_up "systemd installed, but a tool is still missing"
