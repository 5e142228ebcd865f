#!/usr/bin/env bash
# The wandb SDK (0.31.0, the test venv: target/py-clients/venv from src/test/python/requirements.txt) against the
# packaged application on a fresh embedded PostgreSQL, beside the same work through the REST API: run.log rows/s (10
# metrics a row, one SDK process) and a MB-megabyte artifact's upload and download MB/s (bench/wandb_sdk.py).
# Usage: bench/wandb_sdk.sh            (ROWS=10000 MB=200 JAVA_OPTS=... to change)
set -euo pipefail
cd "$(dirname "$0")/.."

# the SDK takes keys of 40 characters or more after a '-' or '_' only
KEY=fk_$(python3 -c 'import secrets; print(secrets.token_hex(32))')
# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
start_fulcrum

# the test suite's client venv, made when missing or stale
python=$(scripts/test-venv.sh src/test/python/requirements.txt | tail -n 1)
mkdir -p bench/results
result="bench/results/wandb-sdk-$(date +%Y-%m-%d).txt"
{
  echo "Fulcrum wandb SDK benchmark, $(date -u +%Y-%m-%dT%H:%MZ), load before: $load_before, $(nproc) cores"
  WANDB_BASE_URL=$base WANDB_API_KEY=$KEY ENTITY=admin WANDB_DIR=$work WANDB_SILENT=true \
    ROWS=${ROWS:-10000} MB=${MB:-200} $python bench/wandb_sdk.py
} | tee "$result"
