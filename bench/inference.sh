#!/usr/bin/env bash
# Inference gateway overhead: the same load (wrk, 32 connections, 20 s, POST /v1/chat/completions) once directly
# against a fast local OpenAI-compatible stub (bench/InferenceStub.java on the application's Vert.x) and once through
# Fulcrum in front of it; prints the throughput ratio and the latency Fulcrum adds at p50 and p99.
# Usage: bench/inference.sh      (DURATION=20s CONNECTIONS=32 THREADS=2 WARMUP=10s WARMUP_ROUNDS=3 JAVA_OPTS=...)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/wrk-lib.sh
source bench/wrk-lib.sh
stub_port=$(free_port)
stub="http://127.0.0.1:$stub_port"

java -cp "target/quarkus-app/lib/main/*" bench/InferenceStub.java "$stub_port" >"$work/stub.log" 2>&1 &
stub_pid=$!
other_pids+=("$stub_pid")

start_fulcrum -Dfulcrum.inference.models.bench-echo.base-url="$stub/v1" \
  -Dfulcrum.inference.models.bench-echo.upstream-model=echo
for _ in $(seq 120); do
  grep -q "stub listening" "$work/stub.log" && break
  kill -0 "$stub_pid" 2>/dev/null || { cat "$work/stub.log"; exit 1; }
  sleep 0.25
done

body='{"model": "bench-echo", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}'
check=$(curl -s -w ' %{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d "$body" \
  "$base/v1/chat/completions")
[[ $check == *" 200" ]] || { echo "completion through Fulcrum failed: $check" >&2; tail -40 "$work/fulcrum.log"; exit 1; }

load() { # duration url key [output]
  BENCH_KEY=$3 BENCH_MODEL=bench-echo wrk -t"$THREADS" -c"$CONNECTIONS" -d"$1" --latency -s bench/chat.lua "$2" \
    >"${4:-/dev/null}"
}
# warm-up: on 2 shared cores the JIT needs tens of seconds of load before the stub and Fulcrum run compiled code, so
# both paths are loaded in turns before the measured runs
for _ in $(seq "$WARMUP_ROUNDS"); do
  load "$WARMUP" "$stub/v1/chat/completions" ""
  load "$WARMUP" "$base/v1/chat/completions" "$KEY"
done
# CPU time (clock ticks) of the processes and of the whole machine, around each measured run
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
machine() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
measure() { # name url key
  local pgs before after
  pgs=$(pgrep -d' ' -f "postgres" || true)
  # shellcheck disable=SC2086 # a list of pids
  before="$(ticks "$pid") $(ticks "$stub_pid") $(ticks $pgs) $(machine)"
  load "$DURATION" "$2" "$3" "$work/wrk-$1.txt"
  # shellcheck disable=SC2086
  after="$(ticks "$pid") $(ticks "$stub_pid") $(ticks $pgs) $(machine)"
  echo "$before $after" >"$work/cpu-$1.txt"
}
measure direct "$stub/v1/chat/completions" ""
measure fulcrum "$base/v1/chat/completions" "$KEY"

mkdir -p bench/results
result="bench/results/inference-$(date +%Y-%m-%d).txt"
python3 - "$work" "$DURATION" "$CONNECTIONS" "$THREADS" "$load_before" <<'PY' | tee "$result"
import re, subprocess, sys, os
sys.path.insert(0, "bench")
import wrk_results
work, duration, connections, threads, load = sys.argv[1:6]

def parse(name):
    return wrk_results.parse(f"{work}/wrk-{name}.txt")

direct, fulcrum = parse("direct"), parse("fulcrum")
print(wrk_results.header("Fulcrum inference gateway benchmark", load))
print(f"wrk -t{threads} -c{connections} -d{duration} --latency, POST /v1/chat/completions (plain), stub upstream on "
      f"one Vert.x event loop; wrk, stub and Fulcrum share the machine; JAVA_OPTS='{os.environ.get('JAVA_OPTS', '')}'")
print()
print(f"{'path':<22}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}  socket errors")
for label, (rps, p50, p99, non2xx, sock) in (("direct to the stub", direct), ("through Fulcrum", fulcrum)):
    print(f"{label:<22}{rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{non2xx:>9}  {sock}")
ratio = fulcrum[0] / direct[0]
added50, added99 = fulcrum[1] - direct[1], fulcrum[2] - direct[2]
print()
print(f"throughput through Fulcrum: {ratio:.0%} of direct (target >= 60%)  {'OK' if ratio >= 0.6 else 'MISSED'}")
print(f"added latency p50: {added50:.2f} ms (target <= 1 ms)  {'OK' if added50 <= 1 else 'MISSED'}")
print(f"added latency p99: {added99:.2f} ms (target <= 5 ms)  {'OK' if added99 <= 5 else 'MISSED'}")

# CPU per request, from the ticks around each run (USER_HZ = 100 ticks/s) and wrk's request count
hz = os.sysconf("SC_CLK_TCK")
def per_request(name):
    with open(f"{work}/cpu-{name}.txt") as f:
        t = [int(x) for x in f.read().split()]
    with open(f"{work}/wrk-{name}.txt") as f:
        requests = int(re.search(r"(\d+) requests in", f.read()).group(1))
    return [(t[i + 4] - t[i]) / hz * 1e6 / requests for i in range(4)]
print()
print("CPU per request, microseconds (Fulcrum / stub / PostgreSQL / whole machine incl. wrk and kernel):")
for label, name in (("direct to the stub", "direct"), ("through Fulcrum", "fulcrum")):
    f, st, pg, total = per_request(name)
    print(f"  {label:<20} {f:6.1f} {st:6.1f} {pg:6.1f} {total:6.1f}")
PY
echo "written to $result"
