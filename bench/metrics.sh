#!/usr/bin/env bash
# Measures metric ingestion through the runs API: starts Fulcrum with a fresh data directory and POSTs batches of
# metric rows with wrk (Debian: apt-get install -y wrk).
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
PORT=${BENCH_PORT:-18093}
KEY=fk_bench-key-0123456789abcdef
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
JAR="$ROOT/target/quarkus-app/quarkus-run.jar"

command -v wrk > /dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
if [ ! -f "$JAR" ]; then
  (cd "$ROOT" && ./mvnw -B -q package -DskipTests)
fi

DATA=$(mktemp -d /tmp/fulcrum-bench.XXXXXX)
FULCRUM_DATA_DIR="$DATA" FULCRUM_BOOTSTRAP_API_KEY="$KEY" QUARKUS_HTTP_PORT="$PORT" \
  java -jar "$JAR" > "$DATA/server.log" 2>&1 &
SERVER=$!
cleanup() {
  kill "$SERVER" 2> /dev/null || true
  wait "$SERVER" 2> /dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT

BASE="http://localhost:$PORT"
for _ in $(seq 1 120); do
  if curl -fs "$BASE/q/health/ready" > /dev/null 2>&1; then break; fi
  sleep 1
done
curl -fs "$BASE/q/health/ready" > /dev/null || { echo "server did not start; log:" >&2; cat "$DATA/server.log" >&2; exit 1; }

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
