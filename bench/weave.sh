#!/usr/bin/env bash
# Publishes and reads back a 10,000-row dataset through the official Weave TypeScript SDK (weave 0.11.1, installed
# with npm ci from src/test/node/weave-sdk/package-lock.json), on the packaged application with its embedded
# PostgreSQL in a fresh data directory; prints the time of each publish and read.
# Usage: bench/weave.sh            (ROWS=10000 RUNS=3 JAVA_OPTS=... to change)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
start_fulcrum

(cd src/test/node/weave-sdk && npm ci --no-audit --no-fund >/dev/null)
mkdir -p bench/results
result="bench/results/weave-$(date +%Y-%m-%d).txt"
{
  echo "Fulcrum Weave SDK benchmark, $(date -u +%Y-%m-%dT%H:%MZ), load before: $load_before, $(nproc) cores"
  echo "weave 0.11.1 (Node $(node --version)): Dataset.save() then ObjectRef.fromUri(ref).get() with its rows"
  (cd src/test/node/weave-sdk && WF_TRACE_SERVER_URL=$base WANDB_API_KEY=$KEY PROJECT=admin/bench \
    ROWS=${ROWS:-10000} RUNS=${RUNS:-3} node bench.mjs)
} | tee "$result"
