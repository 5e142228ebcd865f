#!/usr/bin/env bash
# What the test suite installs for itself, installed in the background while Maven builds and the first tests run
# (pom.xml starts it at the start of a `verify` that runs every test): the Python clients' virtual environments, the
# training worker's, and Debian's Chromium for the browser tests. Each is made by the script a test calls when it needs
# it, under that script's lock, so a test that comes first waits for the work under way instead of repeating it, and
# a failure here is the test's own failure later (with its output). Logs to target/test-prefetch.log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p target
exec >target/test-prefetch.log 2>&1
step() {
  local start=$SECONDS
  if "$@"; then
    echo "$* ($((SECONDS - start)) s)"
  else
    echo "$* failed ($((SECONDS - start)) s); the test that needs it will try again"
  fi
}
# in the order the tests first need them
step scripts/test-venv.sh src/test/python/requirements.txt
step bash worker/scripts/test-env.sh
step scripts/test-venv.sh src/test/python/schemathesis/requirements.txt
step scripts/test-venv.sh src/test/python/art_serverless/requirements.txt
step scripts/test-venv.sh src/test/python/tinker_sdk/requirements.txt
step scripts/test-venv.sh src/test/python/tinker_sdk_038/requirements.txt
step scripts/test-venv.sh src/test/python/lm_eval/requirements.txt
step scripts/install-chromium.sh
