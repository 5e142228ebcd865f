#!/usr/bin/env bash
# Makes worker/.venv (git-ignored): the worker, installed editable from this tree, with its pinned dependencies and
# test tools. Idempotent: does nothing while the venv was made from the same pyproject.toml. The first run downloads
# torch (pip's cache serves later runs). Under a lock (.venv.lock): the test run's background prefetch
# (scripts/test-prefetch.sh) and a test that needs the venv at the same moment make it once.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>.venv.lock
flock 9
python=${PYTHON:-python3}
stamp=.venv/.installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ -x .venv/bin/fulcrum-worker ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
echo "$want" > "$stamp"
