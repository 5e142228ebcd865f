#!/usr/bin/env bash
# Measures metric ingestion through the runs API: starts Fulcrum with a fresh data directory and POSTs batches of
# metric rows with wrk (installed when missing).
#
#   bench/metrics.sh [duration-seconds] [connections] [rows-per-batch] [metrics-per-row]
#
# Prints the metric values per second that were stored (rows x metrics of the 200 responses / duration).
set -euo pipefail

DURATION=${1:-20}
CONNECTIONS=${2:-8}
ROWS=${3:-100}
KEYS=${4:-10}
RUNS=${BENCH_RUNS:-4}
# shellcheck source=bench/server-lib.sh
source "$(dirname "$0")/server-lib.sh"
HERE=$BENCH_DIR
BASE=$base
need_wrk
start_fulcrum

for i in $(seq 0 $((RUNS - 1))); do
  curl -fs -o /dev/null -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d "{\"name\": \"bench-$i\"}" "$BASE/api/v1/entities/admin/projects/bench/runs"
done

# warm-up (JIT, connection pool), then the measured run
FULCRUM_KEY=$KEY BENCH_PROJECT=admin/projects/bench BENCH_RUNS=$RUNS BENCH_ROWS=$ROWS BENCH_KEYS=$KEYS \
  wrk -t2 -c"$CONNECTIONS" -d5s -s "$HERE/metrics.lua" "$BASE" > /dev/null
echo "== $DURATION s, $CONNECTIONS connections, $ROWS rows x $KEYS metrics per request, $RUNS runs"
FULCRUM_KEY=$KEY BENCH_PROJECT=admin/projects/bench BENCH_RUNS=$RUNS BENCH_ROWS=$ROWS BENCH_KEYS=$KEYS \
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$HERE/metrics.lua" "$BASE" | tail -n 3

STORED=0
for i in $(seq 0 $((RUNS - 1))); do
  ROWS_STORED=$(curl -fs -H "Authorization: Bearer $KEY" "$BASE/api/v1/entities/admin/projects/bench/runs/bench-$i" \
    | sed -E 's/.*"history_rows":([0-9]+).*/\1/')
  STORED=$((STORED + ROWS_STORED))
done
echo "rows stored in total (warm-up included): $STORED"
