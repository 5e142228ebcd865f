#!/usr/bin/env bash
# Inference gateway overhead: the same load (wrk, 20 s, POST /v1/chat/completions) directly against a fast local
# OpenAI-compatible stub (bench/InferenceStub.java on the application's Vert.x), through Fulcrum in front of it, and
# through nginx as a plain reverse proxy in front of the same stub (no key, no JSON, no usage: the least any HTTP
# gateway does), at 32 connections and at 1 (CONNECTION_COUNTS). Prints each path's throughput and latency, and the
# targets: at 32 connections Fulcrum serves >= 90 % of nginx's requests/s; at 1 connection the latency Fulcrum adds
# at p50 is within 0.03 ms of what nginx adds. A second reference, a bare reverse proxy on Vert.x (bench/BareProxy.java:
# the HTTP server and client Fulcrum runs on, without any of its work), shows what a JVM gateway costs before it does
# anything. REFERENCE=0 skips both references.
# Usage: bench/inference.sh      (DURATION=20s CONNECTION_COUNTS="32 1" THREADS=2 WARMUP=10s WARMUP_ROUNDS=3
#                                 REFERENCE=1 JAVA_OPTS=... JAR=<another build's quarkus-run.jar>)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/wrk-lib.sh
source bench/wrk-lib.sh
stub_port=$(free_port)
stub="http://127.0.0.1:$stub_port"

java -cp "target/quarkus-app/lib/main/*" bench/InferenceStub.java "$stub_port" >"$work/stub.log" 2>&1 &
stub_pid=$!
other_pids+=("$stub_pid")

REFERENCE=${REFERENCE:-1}
if [[ $REFERENCE == 1 ]]; then
  if ! command -v nginx >/dev/null; then
    apt-get update -qq && apt-get install -y -qq nginx >/dev/null
  fi
  nginx_port=$(free_port)
  nginx="http://127.0.0.1:$nginx_port"
  # as many workers as Fulcrum has event loops (one per core), keep-alive connections to the stub, nothing buffered
  cat >"$work/nginx.conf" <<EOF
worker_processes $(nproc);
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream stub { server 127.0.0.1:$stub_port; keepalive 64; }
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      proxy_pass http://stub;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
EOF
  nginx -c "$work/nginx.conf" -p "$work" >"$work/nginx.log" 2>&1 &
  other_pids+=("$!")
  bare_port=$(free_port)
  bare="http://127.0.0.1:$bare_port"
  java -cp "target/quarkus-app/lib/main/*" bench/BareProxy.java "$bare_port" "$stub_port" >"$work/bare.log" 2>&1 &
  other_pids+=("$!")
fi

start_fulcrum -Dfulcrum.inference.models.bench-echo.base-url="$stub/v1" \
  -Dfulcrum.inference.models.bench-echo.upstream-model=echo
for _ in $(seq 120); do
  grep -q "stub listening" "$work/stub.log" && break
  kill -0 "$stub_pid" 2>/dev/null || { cat "$work/stub.log"; exit 1; }
  sleep 0.25
done
if [[ $REFERENCE == 1 ]]; then
  for _ in $(seq 120); do
    grep -q "proxy listening" "$work/bare.log" && break
    sleep 0.25
  done
  grep -q "proxy listening" "$work/bare.log" || { cat "$work/bare.log"; exit 1; }
fi

body='{"model": "bench-echo", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}'
check=$(curl -s -w ' %{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d "$body" \
  "$base/v1/chat/completions")
[[ $check == *" 200" ]] || { echo "completion through Fulcrum failed: $check" >&2; tail -40 "$work/fulcrum.log"; exit 1; }

CONNECTION_COUNTS=${CONNECTION_COUNTS:-32 1}
load() { # duration url key [output] [connections]
  local c=${5:-$CONNECTIONS} t=$THREADS
  ((t > c)) && t=$c
  BENCH_KEY=$3 BENCH_MODEL=bench-echo wrk -t"$t" -c"$c" -d"$1" --latency -s bench/chat.lua "$2" \
    >"${4:-/dev/null}"
}
# warm-up: on 2 shared cores the JIT needs tens of seconds of load before the stub and Fulcrum run compiled code, so
# both paths are loaded in turns before the measured runs
warm() { # connections: every path loaded once
  load "$WARMUP" "$stub/v1/chat/completions" "" /dev/null "$1"
  load "$WARMUP" "$base/v1/chat/completions" "$KEY" /dev/null "$1"
  if [[ $REFERENCE == 1 ]]; then
    load "$WARMUP" "$nginx/v1/chat/completions" "" /dev/null "$1"
    load "$WARMUP" "$bare/v1/chat/completions" "" /dev/null "$1"
  fi
}
for _ in $(seq "$WARMUP_ROUNDS"); do
  warm "$CONNECTIONS"
done
# CPU time (clock ticks) of the processes and of the whole machine, around each measured run
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
machine() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
measure() { # name connections url key
  local pgs gateway before after
  pgs=$(pgrep -d' ' -f "postgres" || true)
  gateway=$pid # the gateway's processes: Fulcrum, nginx's master and workers, or the bare proxy
  if [[ $1 == nginx ]]; then gateway="$(cat "$work/nginx.pid") $(pgrep -d' ' -P "$(cat "$work/nginx.pid")")"; fi
  if [[ $1 == bare ]]; then gateway=$(pgrep -f "BareProxy.java $bare_port"); fi
  # shellcheck disable=SC2086 # lists of pids
  before="$(ticks $gateway) $(ticks "$stub_pid") $(ticks $pgs) $(machine)"
  load "$DURATION" "$3" "$4" "$work/wrk-$1-$2.txt" "$2"
  # shellcheck disable=SC2086
  after="$(ticks $gateway) $(ticks "$stub_pid") $(ticks $pgs) $(machine)"
  echo "$before $after" >"$work/cpu-$1-$2.txt"
}
for c in $CONNECTION_COUNTS; do
  if [[ $c != "$CONNECTIONS" ]]; then
    # a JVM recompiles for a load of another shape (at one connection the compiler threads were busy for the whole
    # first run, beside the event loop): every path is loaded at this count once before it is measured
    warm "$c"
  fi
  measure direct "$c" "$stub/v1/chat/completions" ""
  from=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
  measure fulcrum "$c" "$base/v1/chat/completions" "$KEY"
  to=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
  echo "$from $to" >"$work/window-$c.txt"
  if [[ $REFERENCE == 1 ]]; then
    measure nginx "$c" "$nginx/v1/chat/completions" ""
    measure bare "$c" "$bare/v1/chat/completions" ""
  fi
done
# the time the same requests took inside Fulcrum, from their usage records (written within a second or two)
sleep 3
for c in $CONNECTION_COUNTS; do
  read -r from to <"$work/window-$c.txt"
  curl -sf -H "Authorization: Bearer $KEY" "$base/api/v1/usage?entity=admin&project=inference&from=$from&to=$to" \
    >"$work/usage-fulcrum-$c.json"
done

mkdir -p bench/results
result="bench/results/inference-$(date +%Y-%m-%d).txt"
python3 - "$work" "$DURATION" "$CONNECTION_COUNTS" "$THREADS" "$load_before" <<'PY' | tee "$result"
import json, re, sys, os
sys.path.insert(0, "bench")
import wrk_results
work, duration, counts, threads, load = sys.argv[1:6]
hz = os.sysconf("SC_CLK_TCK")

def parse(name, c):
    path = f"{work}/wrk-{name}-{c}.txt"
    return wrk_results.parse(path) if os.path.exists(path) else None

def per_request(name, c):
    """CPU per request, microseconds: the gateway, the stub, PostgreSQL, the whole machine (USER_HZ ticks)."""
    with open(f"{work}/cpu-{name}-{c}.txt") as f:
        t = [int(x) for x in f.read().split()]
    with open(f"{work}/wrk-{name}-{c}.txt") as f:
        requests = int(re.search(r"(\d+) requests in", f.read()).group(1))
    return [(t[i + 4] - t[i]) / hz * 1e6 / requests for i in range(4)]

print(wrk_results.header("Fulcrum inference gateway benchmark", load))
print(f"wrk -d{duration} --latency (threads: min({threads}, connections)), POST /v1/chat/completions (plain), stub "
      f"upstream on one Vert.x event loop; wrk, stub, nginx and Fulcrum share the machine; "
      f"JAVA_OPTS='{os.environ.get('JAVA_OPTS', '')}' JAR={os.environ.get('JAR', 'target')}")
for c in counts.split():
    direct, fulcrum, reference, bare = parse("direct", c), parse("fulcrum", c), parse("nginx", c), parse("bare", c)
    print()
    print(f"{c} connection(s)")
    print(f"{'path':<22}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'added p50':>11}{'non-2xx':>9}  socket errors")
    rows = [("direct to the stub", direct), ("through Fulcrum", fulcrum)]
    if reference:
        rows.append(("through nginx", reference))
    if bare:
        rows.append(("bare Vert.x proxy", bare))
    for label, (rps, p50, p99, non2xx, sock) in rows:
        print(f"{label:<22}{rps:>10.0f}{p50:>9.3f}{p99:>9.3f}{p50 - direct[1]:>11.3f}{non2xx:>9}  {sock}")
    with open(f"{work}/usage-fulcrum-{c}.json") as f:
        inside = next((row for row in json.load(f)["data"] if row["key"] == "bench-echo"), None)
    if inside:
        print(f"inside Fulcrum (its usage records of the same {inside['requests']} requests): p50 "
              f"{inside['latency_ms_p50']} ms, p99 {inside['latency_ms_p99']} ms, max {inside['latency_ms_max']} ms")
    print("CPU per request, microseconds (gateway / stub / PostgreSQL / whole machine incl. wrk and kernel):")
    for label, name in (("direct to the stub", "direct"), ("through Fulcrum", "fulcrum"), ("through nginx", "nginx"),
                        ("bare Vert.x proxy", "bare")):
        if os.path.exists(f"{work}/cpu-{name}-{c}.txt"):
            g, st, pg, total = per_request(name, c)
            print(f"  {label:<20} {g:6.1f} {st:6.1f} {pg:6.1f} {total:6.1f}")
    if reference:
        ratio = fulcrum[0] / reference[0]
        gap = (fulcrum[1] - direct[1]) - (reference[1] - direct[1])
        if int(c) >= 32:
            print(f"throughput through Fulcrum: {ratio:.0%} of nginx's (target >= 90 %)  "
                  f"{'OK' if ratio >= 0.9 else 'MISSED'}")
            if bare:
                print(f"the bare Vert.x proxy: {bare[0] / reference[0]:.0%} of nginx's; Fulcrum: "
                      f"{fulcrum[0] / bare[0]:.0%} of the bare proxy's")
        else:
            print(f"added p50: Fulcrum {fulcrum[1] - direct[1]:.3f} ms, nginx {reference[1] - direct[1]:.3f} ms, "
                  f"{gap:+.3f} ms (target <= 0.03 ms)  {'OK' if gap <= 0.03 else 'MISSED'}")
PY
echo "written to $result"
