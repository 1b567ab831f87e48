#!/usr/bin/env bash
# Makes sure Debian's chromium is on this machine for the browser tests of the status
# page (tests/browser); installs the package if not. Playwright drives it as it is:
# no browser is ever downloaded by the tests.
set -euo pipefail
CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
echo "chromium is missing: installing Debian's chromium package" >&2
if [ "$(id -u)" != 0 ]; then
  echo "not root: install the chromium package yourself (apt-get install chromium)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
test -x "$CHROMIUM"
