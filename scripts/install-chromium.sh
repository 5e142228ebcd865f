#!/usr/bin/env bash
# Installs Debian's chromium and chromium-driver when they are missing: the console's browser tests (*IT under
# src/test/java/dev/fulcrum/console) drive them. Called by .ci/run and by the tests themselves (ConsoleApp), so that
# the README's test command needs nothing installed first.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver \
  || { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends chromium chromium-driver; }
