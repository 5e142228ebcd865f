# The one way every benchmark starts Fulcrum (sourced): the packaged jar (built when missing) on a fresh embedded
# PostgreSQL in a temporary directory, on a free loopback port, stopped cleanly on exit together with whatever else
# the benchmark started (add its pids to other_pids; other servers keep their data in a directory under $work).
# Settings for the server go in the environment before start_fulcrum; JAVA_OPTS and JAR (another build, for a
# before/after comparison) are honoured.
#   need_wrk             installs wrk (Debian's package) when it is missing: every wrk benchmark behaves the same
#   start_fulcrum [opts] starts the jar and waits until /q/health/ready answers
#   kill_fulcrum         SIGKILLs it (a crash); start_fulcrum again restarts it on the same data directory and port
# shellcheck shell=bash

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
KEY=${KEY:-fk_bench-key-0123456789abcdef}
JAR=${JAR:-$ROOT/target/quarkus-app/quarkus-run.jar}

if [[ ! -f $JAR ]]; then
  (cd "$ROOT" && ./mvnw -B -q package -DskipTests)
fi

need_wrk() {
  if ! command -v wrk >/dev/null; then
    apt-get update -qq && apt-get install -y -qq wrk >/dev/null
  fi
}

# shellcheck disable=SC2034  # read by the benchmarks that source this file
load_before=$(cut -d" " -f1-3 /proc/loadavg)
work=$(mktemp -d /tmp/fulcrum-bench.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
base="http://127.0.0.1:$port"
pid=
other_pids=() # started by the benchmark itself; killed on exit

stop() {
  local other pm
  for other in "${other_pids[@]}" $pid; do kill "$other" 2>/dev/null || true; done # graceful: stops their PostgreSQL
  for other in "${other_pids[@]}" $pid; do
    for _ in $(seq 300); do kill -0 "$other" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$other" 2>/dev/null || true
  done
  # the embedded PostgreSQL of this benchmark's server, and of any other it started in a data directory of its own
  for pm in "$work"/data/postgres/postmaster.pid "$work"/*/data/postgres/postmaster.pid; do
    if [[ -f $pm ]]; then kill "$(head -1 "$pm")" 2>/dev/null || true; fi
  done
  rm -rf "$work"
}
trap stop EXIT

start_fulcrum() {
  # shellcheck disable=SC2086 # JAVA_OPTS holds several options
  FULCRUM_DATA_DIR="$work/data" QUARKUS_HTTP_PORT=$port QUARKUS_HTTP_HOST=127.0.0.1 FULCRUM_BOOTSTRAP_API_KEY=$KEY \
    java ${JAVA_OPTS:-} "$@" -jar "$JAR" >>"$work/fulcrum.log" 2>&1 &
  pid=$!
  for _ in $(seq 480); do
    curl -sf "$base/q/health/ready" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { tail -60 "$work/fulcrum.log"; exit 1; }
    sleep 0.25
  done
  echo "Fulcrum did not get ready" >&2
  tail -40 "$work/fulcrum.log"
  exit 1
}

kill_fulcrum() {
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
}
