# Shared by datasets.sh and inference.sh (sourced from the repository root): the load settings, wrk and the jar
# (installed and built when missing), a work directory, and the packaged Fulcrum on a fresh embedded PostgreSQL,
# stopped cleanly on exit together with the benchmark's other processes.
# shellcheck shell=bash

DURATION=${DURATION:-20s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
# on 2 shared cores the JIT needs tens of seconds of load before the code runs compiled
WARMUP=${WARMUP:-10s}
WARMUP_ROUNDS=${WARMUP_ROUNDS:-3}
KEY=fk_bench-key-0123456789abcdef
JAR=${JAR:-target/quarkus-app/quarkus-run.jar}

if ! command -v wrk >/dev/null; then
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
if [[ ! -f $JAR ]]; then
  ./mvnw -B -q package -DskipTests
fi

load_before=$(cut -d" " -f1-3 /proc/loadavg)
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
base="http://127.0.0.1:$port"
pid=
other_pids=() # started by the benchmark itself; killed on exit

stop() {
  local other
  for other in "${other_pids[@]}"; do kill "$other" 2>/dev/null || true; done
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

# start_fulcrum [java options...]: starts the jar (JAVA_OPTS first) and waits until it is ready
start_fulcrum() {
  # shellcheck disable=SC2086 # JAVA_OPTS holds several options
  FULCRUM_DATA_DIR="$work/data" QUARKUS_HTTP_PORT=$port QUARKUS_HTTP_HOST=127.0.0.1 FULCRUM_BOOTSTRAP_API_KEY=$KEY \
    java ${JAVA_OPTS:-} "$@" -jar "$JAR" >"$work/fulcrum.log" 2>&1 &
  pid=$!
  for _ in $(seq 360); do
    curl -sf "$base/q/health/ready" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$work/fulcrum.log"; exit 1; }
    sleep 0.25
  done
  echo "Fulcrum did not get ready" >&2
  tail -40 "$work/fulcrum.log"
  exit 1
}
