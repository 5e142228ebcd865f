#!/usr/bin/env bash
# The virtual environment of one of the test suite's pinned client requirements files, made when missing or stale:
#   scripts/test-venv.sh src/test/python/requirements.txt          target/py-clients/venv
#   scripts/test-venv.sh src/test/python/DIR/requirements.txt      target/py-clients/venv-DIR
#   scripts/test-venv.sh src/test/python/tinker_sdk/requirements.txt target/venv-tinker_sdk
# Prints the environment's interpreter (an absolute path) as its last line. Made again only when the requirements file
# changed since it was made (its SHA-256 is kept in VENV.requirements.sha256), under a lock (VENV.lock): the test run's
# background prefetch (scripts/test-prefetch.sh) and a test that needs the environment at the same moment make it once.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=${1:?usage: scripts/test-venv.sh src/test/python/[DIR/]requirements.txt}
[[ -f $requirements ]] || { echo "no $requirements" >&2; exit 1; }
case $requirements in
  src/test/python/requirements.txt) venv=target/py-clients/venv ;;
  # the tinker SDK's own environment, beside (not inside) the shared clients' directory
  src/test/python/tinker_sdk/requirements.txt) venv=target/venv-tinker_sdk ;;
  src/test/python/*/requirements.txt) venv=target/py-clients/venv-$(basename "$(dirname "$requirements")") ;;
  *) echo "not a requirements file of src/test/python: $requirements" >&2; exit 1 ;;
esac
mkdir -p target/py-clients "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
stamp=$venv.requirements.sha256
wanted=$(sha256sum "$requirements" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$wanted" ]]; then
  rm -f "$stamp"
  # Python 3.11 where installed (the README's prerequisite), else python3
  interpreter=$(command -v python3.11 || command -v python3)
  "$interpreter" -m venv --clear "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$requirements"
  echo "$wanted" >"$stamp"
fi
echo "$PWD/$venv/bin/python"
