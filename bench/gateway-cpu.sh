#!/usr/bin/env bash
# Gateway CPU per request, several builds side by side: every build's jar is started at once (each on its own embedded
# database, all proxying to one stub, bench/InferenceStub.java), warmed up, then loaded in turns, ROUNDS rounds of
# wrk -c$CONNECTIONS -d$DURATION (two threads; one at one connection) on POST /v1/chat/completions each. Per run it
# prints the requests/s and the CPU the server's process used across the run (user and system, /proc/<pid>/stat)
# divided by the requests it served; at the end, per build, the median over rounds 2 and later, and per round the ratio
# to the first build. On a shared machine CPU per request varies much less than requests/s or the ratio to nginx
# (bench/README.md), and measuring in turns gives every build the same machine. Two JVMs of the same build can differ
# by several per cent (each compiles the code its own way): give a build two or three labels to see that spread.
#
#   bench/gateway-cpu.sh label=path/to/quarkus-run.jar[|java options] ...
#       ROUNDS=8 DURATION=10s CONNECTIONS=16
#       JAVA_<label>=path/to/bin/java (that build's JVM; java on the PATH unless given)
set -uo pipefail
cd "$(dirname "$0")/.." || exit
if (($# < 1)); then
  echo "usage: $0 label=quarkus-run.jar[|java options] ..." >&2
  exit 2
fi
ROUNDS=${ROUNDS:-8}
DURATION=${DURATION:-10}
DURATION=${DURATION%s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=$((CONNECTIONS < 2 ? CONNECTIONS : 2)) # wrk needs a connection per thread
JAR=${1#*=}
JAR=${JAR%%|*}
# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh # its work directory, free_port, need_wrk, and the stop of every server on exit
need_wrk
pids=()
labels=()
ports=()
stub_port=$(free_port)
java -cp "$(dirname "$JAR")/lib/main/*" bench/InferenceStub.java "$stub_port" >"$work/stub.log" 2>&1 &
other_pids+=($!)
for spec in "$@"; do
  label=${spec%%=*}
  rest=${spec#*=}
  jar=${rest%%|*}
  options=""
  [[ $rest == *"|"* ]] && options=${rest#*|}
  jvm="JAVA_$label"
  port=$(free_port)
  mkdir -p "$work/$label"
  # shellcheck disable=SC2086 # the options are words
  FULCRUM_DATA_DIR="$work/$label/data" QUARKUS_HTTP_PORT=$port QUARKUS_HTTP_HOST=127.0.0.1 \
    FULCRUM_BOOTSTRAP_API_KEY=$KEY "${!jvm:-java}" $options \
    -Dfulcrum.inference.models.bench-echo.base-url="http://127.0.0.1:$stub_port/v1" \
    -Dfulcrum.inference.models.bench-echo.upstream-model=echo -jar "$jar" >"$work/$label/log" 2>&1 &
  pids+=($!)
  other_pids+=($!)
  labels+=("$label")
  ports+=("$port")
  for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$port/q/health/ready" >/dev/null && break
    sleep 0.5
  done
done
load() { # seconds port: prints requests/s
  BENCH_KEY=$KEY BENCH_MODEL=bench-echo wrk -t"$THREADS" -c"$CONNECTIONS" -d"$1s" -s bench/chat.lua \
    "http://127.0.0.1:$2/v1/chat/completions" | awk '/Requests\/sec/ {print $2}'
}
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # clock ticks (1/100 s)
for i in "${!labels[@]}"; do
  for _ in 1 2 3; do load 10 "${ports[$i]}" >/dev/null; done
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
results=$work/results.txt
for round in $(seq "$ROUNDS"); do
  for i in "${!labels[@]}"; do
    before=$(cpu "${pids[$i]}")
    rps=$(load "$DURATION" "${ports[$i]}")
    after=$(cpu "${pids[$i]}")
    micros=$(python3 -c "print(round(($after - $before) * 1e4 / ($rps * $DURATION), 1))")
    echo "round $round ${labels[$i]} req/s $rps cpu/req ${micros}us" | tee -a "$results"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "${labels[0]}" <<'PY'
import collections, re, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    m = re.match(r"round (\d+) (\S+) req/s \S+ cpu/req (\S+)us", line)
    if m and int(m[1]) > 1:
        runs[m[2]][int(m[1])] = float(m[3])
first = runs[sys.argv[2]]
for label, rounds in runs.items():
    ratios = [rounds[r] / first[r] for r in rounds if r in first]
    print(f"{label}: CPU per request median {statistics.median(rounds.values()):.1f} us (rounds 2 to {max(rounds)}),"
          f" per round / {sys.argv[2]}: median {statistics.median(ratios):.2f}")
PY
