#!/usr/bin/env bash
# Dataset read throughput and latency against /v1/health, and the time to create a 10,000-row dataset,
# on the packaged application with its embedded PostgreSQL in a fresh data directory.
# Usage: bench/datasets.sh            (DURATION=20s CONNECTIONS=32 THREADS=2 CREATE_RUNS=3 WARMUP=10s WARMUP_ROUNDS=3
#                                      JAVA_OPTS=... to change)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-20s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
CREATE_RUNS=${CREATE_RUNS:-3}
WARMUP=${WARMUP:-10s}
WARMUP_ROUNDS=${WARMUP_ROUNDS:-3}
KEY=fk_bench-key-0123456789abcdef
JAR=target/quarkus-app/quarkus-run.jar

if ! command -v wrk >/dev/null; then
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
if [[ ! -f $JAR ]]; then
  ./mvnw -B -q package -DskipTests
fi

load_before=$(cut -d" " -f1-3 /proc/loadavg)
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
pid=
stop() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"                                   # graceful: also stops the embedded PostgreSQL
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  local pm="$work/data/postgres/postmaster.pid"
  if [[ -f $pm ]]; then kill "$(head -1 "$pm")" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap stop EXIT

# shellcheck disable=SC2086 # JAVA_OPTS holds several options
FULCRUM_DATA_DIR="$work/data" QUARKUS_HTTP_PORT=$port QUARKUS_HTTP_HOST=127.0.0.1 FULCRUM_BOOTSTRAP_API_KEY=$KEY \
  java ${JAVA_OPTS:-} -jar "$JAR" >"$work/fulcrum.log" 2>&1 &
pid=$!
for _ in $(seq 360); do
  curl -sf "$base/q/health/ready" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/fulcrum.log"; exit 1; }
  sleep 0.25
done
curl -sf "$base/q/health/ready" >/dev/null || { echo "Fulcrum did not get ready" >&2; tail -40 "$work/fulcrum.log"; exit 1; }

# the JSON bodies, built once
python3 - "$work" "$CREATE_RUNS" <<'PY'
import json, sys
work = sys.argv[1]
def rows(n, prefix):
    return [{"id": i, "question": f"{prefix} question {i}: what is {i} + {i}?", "answer": str(2 * i),
             "tags": ["bench", prefix], "score": i / 7} for i in range(n)]
json.dump({"name": "Bench 100", "rows": rows(100, "small")}, open(f"{work}/rows100.json", "w"))
for run in range(int(sys.argv[2])):
    # distinct content per run, so that every run stores 10,000 new rows
    json.dump({"name": f"Bench 10k {run}", "rows": rows(10_000, f"large{run}")}, open(f"{work}/rows10k-{run}.json", "w"))
PY

auth="Authorization: Bearer $KEY"
created=$(curl -sf -H "$auth" -H 'Content-Type: application/json' --data-binary "@$work/rows100.json" \
  "$base/v2/admin/bench/datasets")
object_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["object_id"])' <<<"$created")
digest=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])' <<<"$created")
read_path="/v2/admin/bench/datasets/$object_id/versions/$digest"
curl -sf -H "$auth" "$base$read_path" >/dev/null
curl -sf -H "$auth" "$base/v1/health" >/dev/null

# warm-up: on 2 shared cores the JIT needs about 40 s of load before both paths run compiled code (CPU per request
# halves from the first 10 s to the third round), so both are loaded in turns before the measured runs
for _ in $(seq "$WARMUP_ROUNDS"); do
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -H "$auth" "$base$read_path" >/dev/null
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -H "$auth" "$base/v1/health" >/dev/null
done
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "$auth" "$base$read_path" >"$work/wrk-dataset.txt"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "$auth" "$base/v1/health" >"$work/wrk-health.txt"

create_times=()
for run in $(seq 0 $((CREATE_RUNS - 1))); do
  out=$(curl -s -o "$work/create-$run.json" -w '%{http_code} %{time_total}' -H "$auth" \
    -H 'Content-Type: application/json' --data-binary "@$work/rows10k-$run.json" "$base/v2/admin/bench/datasets")
  [[ ${out%% *} == 200 ]] || { echo "10k-row create failed: $out $(cat "$work/create-$run.json")" >&2; exit 1; }
  create_times+=("${out#* }")
done

mkdir -p bench/results
result="bench/results/datasets-$(date +%Y-%m-%d).txt"
python3 - "$work" "$DURATION" "$CONNECTIONS" "$THREADS" "$load_before" "${create_times[@]}" <<'PY' | tee "$result"
import re, subprocess, sys, platform, os
sys.path.insert(0, "bench")
import wrk_results
work, duration, connections, threads, load, creates = sys.argv[1:6] + [sys.argv[6:]]

def parse(name):
    return wrk_results.parse(f"{work}/wrk-{name}.txt")

ds, health = parse("dataset"), parse("health")
print(wrk_results.header("Fulcrum dataset benchmark", load))
print(f"wrk -t{threads} -c{connections} -d{duration} --latency (embedded PostgreSQL, JVM jar, "
      f"JAVA_OPTS='{os.environ.get('JAVA_OPTS', '')}')")
print()
print("dataset read = GET /v2/admin/bench/datasets/{object_id}/versions/{digest} (100 rows)")
print(f"{'endpoint':<16}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}  socket errors")
for label, (rps, p50, p99, non2xx, sock) in (("dataset read", ds), ("GET /v1/health", health)):
    print(f"{label:<16}{rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{non2xx:>9}  {sock}")
ratio = ds[0] / health[0]
print()
print(f"dataset/health throughput: {ratio:.0%} (target >= 50%)  {'OK' if ratio >= 0.5 else 'MISSED'}")
print(f"dataset read p99: {ds[2]:.2f} ms (target <= 10 ms)  {'OK' if ds[2] <= 10 else 'MISSED'}")
times = [float(t) for t in creates]
print(f"create 10,000 rows: {', '.join(f'{t:.2f} s' for t in times)} (target < 2 s)  "
      f"{'OK' if max(times) < 2 else 'MISSED'}")
PY
echo "written to $result"
