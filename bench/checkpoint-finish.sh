#!/usr/bin/env bash
# The time a worker's `finish` takes to land a checkpoint of one SIZE_MIB file (bench/checkpoint_finish.py), on the
# packaged jar (JAR=... for another build: a before/after comparison), filesystem blob store, embedded PostgreSQL.
# Usage: bench/checkpoint-finish.sh   SIZE_MIB=500 RUNS=3 JAR=... WORKER_VENV=worker/.venv (made or brought up to date here)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${SIZE_MIB:-500}
RUNS=${RUNS:-3}
WORKER_VENV=${WORKER_VENV:-worker/.venv}
[[ $WORKER_VENV != worker/.venv ]] || bash worker/scripts/test-env.sh # nothing to do when current
# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
# a base model that workers train; its catalog entry is never asked to answer
start_fulcrum -Dfulcrum.training.worker-base-models=bench-finish-base -Dfulcrum.training.cpu-executor=false \
  -Dfulcrum.inference.models.bench-finish-base.base-url=http://127.0.0.1:9/v1 \
  -Dfulcrum.training.max-checkpoint-file-bytes=$(((SIZE_MIB + 1) * 1024 * 1024)) \
  -Dfulcrum.max-json-request-bytes=$(((SIZE_MIB + 1) * 1024 * 1024)) # builds before 2026-11-28 bounded files by it
"$WORKER_VENV/bin/python" bench/checkpoint_finish.py "$base" "$KEY" bench-finish-base --size-mib "$SIZE_MIB" \
  --runs "$RUNS"
