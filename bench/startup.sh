#!/usr/bin/env bash
# Restart to ready: the time from `java -jar` to the first 200 of /q/health/ready, on an embedded PostgreSQL whose
# data directory already exists (a restart, not a first start: no initdb, no migrations to apply). Each jar gets its
# own data directory, made by one start that is not measured; then the jars are restarted in turns RUNS times, so
# that both see the same load of a shared machine. Prints every time and, per jar, the median, min and max, of the
# wall-clock time and of the CPU time the JVM used until ready (user and system: on a machine shared with other work
# the wall-clock time follows the load, the CPU time much less), and the part of that CPU time the JIT compilers used.
#
#   bench/startup.sh [other.jar...]     RUNS=5 (restarts per jar), JAVA_OPTS=... (for every start), JAR=... (the first),
#                                       JAVA_OPTS_<n>=... (for jar n's starts only, counted from 0),
#                                       JAVA_<n>=path/to/bin/java (jar n's JVM; java on the PATH unless given)
#
# A jar may be given more than once, with different options or JVMs: for example with and without its start-up archive
# (scripts/startup-archive.sh), JAVA_OPTS_1=-XX:SharedArchiveFile=target/quarkus-app/startup.jsa.
#
# The first jar is this build's (target/quarkus-app/quarkus-run.jar, packaged when missing, or JAR); other jars (for
# example the quarkus-run.jar of an older commit built in a worktree of its own) are compared with it. The log of the
# last start of each jar is kept in bench/results/startup-<n>.log, to see where the time went.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
RUNS=${RUNS:-5}
KEY=fk_bench-key-0123456789abcdef
jars=("${JAR:-$ROOT/target/quarkus-app/quarkus-run.jar}")
for other in "$@"; do
  jars+=("$(cd "$(dirname "$other")" && pwd)/$(basename "$other")")
done
if [[ ! -f ${jars[0]} ]]; then
  (cd "$ROOT" && ./mvnw -B -q package -DskipTests)
fi
mkdir -p "$BENCH_DIR/results"

work=$(mktemp -d /tmp/fulcrum-startup.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pid=

stop_fulcrum() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" # graceful: also stops the embedded PostgreSQL, so that the next start finds it stopped
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  pid=
}
cleanup() {
  stop_fulcrum
  local pm
  for pm in "$work"/data-*/postgres/postmaster.pid; do
    [[ -f $pm ]] && kill "$(head -1 "$pm")" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# starts jar number $1 on its data directory; sets ms to the milliseconds until readiness answered 200, cpu to the
# CPU milliseconds the JVM had used by then and jit to those of its JIT compiler threads (not printed: in a command
# substitution the pid would stay in the subshell, and the server would never be stopped)
ms=
cpu=
jit=
tick=$(getconf CLK_TCK)
start_ready() {
  local n=$1 start ready own="JAVA_OPTS_$1" jvm="JAVA_$1"
  start=$(date +%s%N)
  # shellcheck disable=SC2086 # JAVA_OPTS holds several options
  FULCRUM_DATA_DIR="$work/data-$n" QUARKUS_HTTP_PORT=$port QUARKUS_HTTP_HOST=127.0.0.1 \
    FULCRUM_BOOTSTRAP_API_KEY=$KEY "${!jvm:-java}" ${JAVA_OPTS:-} ${!own:-} -jar "${jars[$n]}" >"$work/last-$n.log" 2>&1 &
  pid=$!
  # polled every 20 ms: a coarser step would hide the differences this measures
  for _ in $(seq 6000); do
    if curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$port/q/health/ready"; then
      ready=$(date +%s%N)
      ms=$(((ready - start) / 1000000))
      # utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks
      cpu=$(awk -v tick="$tick" '{ print int(($14 + $15) * 1000 / tick) }' "/proc/$pid/stat")
      # the share of it that the JIT compilers' threads used (C1 and C2 CompilerThread), summed over /proc/<pid>/task
      jit=$(for task in /proc/"$pid"/task/*; do
        if grep -q CompilerThre "$task/comm" 2>/dev/null; then cat "$task/stat"; fi
      done | awk -v tick="$tick" '{ t += $14 + $15 } END { print int(t * 1000 / tick) }')
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { tail -40 "$work/last-$n.log" >&2; exit 1; }
    sleep 0.02
  done
  echo "jar $n did not get ready" >&2
  exit 1
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
for n in "${!jars[@]}"; do
  start_ready "$n"
  echo "jar $n: ${jars[$n]} (first start, not measured: $ms ms)"
  stop_fulcrum
done
declare -A times cpus jits
for run in $(seq "$RUNS"); do
  for n in "${!jars[@]}"; do
    start_ready "$n"
    times[$n]="${times[$n]:-} $ms"
    cpus[$n]="${cpus[$n]:-} $cpu"
    jits[$n]="${jits[$n]:-} $jit"
    echo "run $run, jar $n: $ms ms (CPU $cpu ms, of which JIT compilers $jit ms)"
    stop_fulcrum
  done
done
for n in "${!jars[@]}"; do
  cp "$work/last-$n.log" "$BENCH_DIR/results/startup-$n.log"
  # shellcheck disable=SC2086 # the times are a list of words
  python3 - "$n" "${times[$n]}" "${cpus[$n]}" "${jits[$n]}" <<'PY'
import statistics, sys
n = sys.argv[1]
for what, values in (("restart to ready", sys.argv[2]), ("CPU until ready", sys.argv[3]),
                     ("of which JIT compilers", sys.argv[4])):
    v = sorted(int(t) for t in values.split())
    print(f"jar {n}: {what} median {statistics.median(v) / 1000:.2f} s, min {v[0] / 1000:.2f} s, "
          f"max {v[-1] / 1000:.2f} s over {len(v)} restarts")
PY
  echo "  warnings in its log: $(grep -c -E ' WARN |\[warning\]|^WARNING:' "$work/last-$n.log" || true)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
