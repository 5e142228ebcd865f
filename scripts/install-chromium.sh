#!/usr/bin/env bash
# Installs Debian's chromium and chromium-driver when they are missing: the console's browser tests (*IT under
# src/test/java/dev/fulcrum/console) drive them. Called by .ci/run and by the tests themselves (ConsoleApp), so that
# the README's test command needs nothing installed first.
set -euo pipefail
installed() { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; }
installed && exit 0
# one install at a time (the test run's background prefetch, scripts/test-prefetch.sh, and a browser test)
exec 9>"${TMPDIR:-/tmp}/fulcrum-install-chromium.lock"
flock 9
installed && exit 0
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver \
  || { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends chromium chromium-driver; }
