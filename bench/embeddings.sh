#!/usr/bin/env bash
# The local embedding model's throughput: wrk POSTs /v1/embeddings to all-minilm-l6-v2 (all-MiniLM-L6-v2 on ONNX
# Runtime inside Fulcrum, fulcrum.inference.local-embeddings.threads worker threads) with INPUTS_LIST texts per
# request, one run per count, and prints requests/s, texts/s and the latency (p50, p99) of each, with the non-2xx
# answers (429 when the project's queue is full).
# Usage: bench/embeddings.sh      (DURATION=20s CONNECTIONS=8 THREADS=2 WARMUP=10s WARMUP_ROUNDS=1 INPUTS_LIST="1 16"
#                                  FORMAT=float JAVA_OPTS=... JAR=<another build's quarkus-run.jar>)
set -euo pipefail
cd "$(dirname "$0")/.."

CONNECTIONS=${CONNECTIONS:-8}
WARMUP_ROUNDS=${WARMUP_ROUNDS:-1}
INPUTS_LIST=${INPUTS_LIST:-1 16}
FORMAT=${FORMAT:-float}
# shellcheck source=bench/wrk-lib.sh
source bench/wrk-lib.sh
start_fulcrum

check=$(curl -s -w ' %{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d '{"model": "all-minilm-l6-v2", "input": "hello"}' "$base/v1/embeddings")
[[ $check == *" 200" ]] || { echo "embeddings failed: $check" >&2; tail -40 "$work/fulcrum.log"; exit 1; }

load() { # duration inputs [output]
  local t=$THREADS
  ((t > CONNECTIONS)) && t=$CONNECTIONS
  BENCH_KEY=$KEY BENCH_MODEL=all-minilm-l6-v2 BENCH_INPUTS=$2 BENCH_FORMAT=$FORMAT \
    wrk -t"$t" -c"$CONNECTIONS" -d"$1" --timeout 30s --latency -s bench/embeddings.lua "$base/v1/embeddings" >"${3:-/dev/null}"
}
for _ in $(seq "$WARMUP_ROUNDS"); do
  load "$WARMUP" 1
done
for inputs in $INPUTS_LIST; do
  load "$DURATION" "$inputs" "$work/wrk-$inputs.txt"
done

mkdir -p bench/results
result="bench/results/embeddings-$(date +%Y-%m-%d).txt"
python3 - "$work" "$DURATION" "$CONNECTIONS" "$INPUTS_LIST" "$FORMAT" "$load_before" <<'PY' | tee "$result"
import sys
sys.path.insert(0, "bench")
import wrk_results
work, duration, connections, inputs_list, fmt, load = sys.argv[1:7]
print(wrk_results.header("Fulcrum local embeddings benchmark (all-minilm-l6-v2)", load))
print(f"wrk -c{connections} -d{duration} --timeout 30s --latency, POST /v1/embeddings, encoding_format {fmt}; wrk and Fulcrum "
      "share the machine")
print(f"{'texts/request':>14}{'req/s':>10}{'texts/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>9}  socket errors")
for inputs in inputs_list.split():
    rps, p50, p99, non2xx, sock = wrk_results.parse(f"{work}/wrk-{inputs}.txt")
    print(f"{inputs:>14}{rps:>10.1f}{rps * int(inputs):>10.1f}{p50:>10.2f}{p99:>10.2f}{non2xx:>9}  {sock}")
PY
echo "written to $result"
