#!/usr/bin/env bash
# Makes sure initdb and pg_ctl are on this machine; installs Debian's postgresql if not.
set -euo pipefail
find_bin() {
  command -v "$1" 2>/dev/null && return 0
  ls /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -n 1 | grep . && return 0
  return 1
}
if find_bin initdb >/dev/null && find_bin pg_ctl >/dev/null; then
  exit 0
fi
echo "PostgreSQL server programs are missing: installing Debian's postgresql package" >&2
if [ "$(id -u)" != 0 ]; then
  echo "not root: install the postgresql package yourself (apt-get install postgresql)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
find_bin initdb >/dev/null && find_bin pg_ctl >/dev/null
