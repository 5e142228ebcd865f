#!/usr/bin/env bash
# Issue 43 §5, a soak: DURATION (30 minutes by default) of mixed load at a steady rate against the packaged server on
# a fresh embedded PostgreSQL (loopback allowed as a webhook target), with the Node webhook receiver (it checks every
# delivery's signature, bench/receiver) and one fulcrum-worker training the tiny Llama (`fulcrum-worker
# make-tiny-model`, a worker base model): dataset reads and writes, chat on the built-in fulcrum-tiny, artifact tag
# events whose automation posts to the receiver, Weave call start/end, console pages with a session, and one SFT job at
# a time through the worker. bench/soak.py sets up, sends the load open-loop (on a schedule, not as fast as possible)
# and records per minute each kind's count, errors, p50 and p99 and the server's RSS, heap, threads, open file
# descriptors and the load average. It prints the tables (markdown) and the verdict, and exits 1 when it fails: any
# error, a delivery missing or badly signed, or growth after the warm-up: the median of the last 5 minutes against
# that of the first 5 after the warm-up, RSS and heap (each minute's minimum) more than 10 % apart, threads up by more
# than 5, fds by more than 10, and the live heap (`jcmd <pid> GC.class_histogram`, after a full collection, at the
# warm-up's end and at the end) more than 10 % apart. Figures in target/bench-soak.json, tables in target/bench-soak.md.
# Usage: bench/soak.sh        DURATION=30m WARMUP_MINUTES=5 SFT_EPOCHS=20 NICE=10 (the worker's)
#                             RATES="ds_read=20,ds_write=2,chat=0.5,webhook=1,weave=5,console=1" (per second; partial)
#                             WORKER_VENV=dir (a venv with fulcrum-worker; default worker/.venv, see model-lib.sh)
#                             JAR=... JAVA_OPTS=... as for every benchmark
# Trial: DURATION=3m WARMUP_MINUTES=1 bench/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."

NICE=${NICE:-10}
BASE_MODEL=fulcrum/tiny-llama

# shellcheck source=bench/model-lib.sh
source bench/model-lib.sh
resolve_worker_venv
tiny=$PWD/target/fulcrum-worker/tiny-llama
if [[ ! -f $tiny/config.json ]]; then
  "$worker_venv/bin/fulcrum-worker" make-tiny-model "$tiny"
fi

# the server, the receiver and the team's webhook helpers (bench/webhooks-lib.sh sources bench/server-lib.sh)
# shellcheck source=bench/webhooks-lib.sh
source bench/webhooks-lib.sh
start_receiver
FULCRUM_TRAINING_WORKER_BASE_MODELS=$BASE_MODEL start_server
echo "Fulcrum (pid $pid) on $base, its log in $work/fulcrum.log; receiver on $RECEIVER_URL"

PYTHONUNBUFFERED=1 nice -n "$NICE" "$worker_venv/bin/fulcrum-worker" run --server "$base" --api-key "$KEY" \
  --base-model "$BASE_MODEL" --model-path "$tiny" --name soak --threads 1 --wait 5 >"$work/worker.log" 2>&1 &
worker_pid=$!
other_pids+=("$worker_pid")

mkdir -p target
commit=$(git rev-parse --short HEAD)
echo "soak of $commit from $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load average before: $load_before"
status=0
BASE=$base KEY=$KEY SECRET=$SECRET RECEIVER_URL=$RECEIVER_URL SERVER_PID=$pid WORKER_PID=$worker_pid \
  BASE_MODEL=$BASE_MODEL JSON=$PWD/target/bench-soak.json python3 bench/soak.py || status=$?
echo "ended $(date -u +%Y-%m-%dT%H:%M:%SZ), load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ $status != 0 ]]; then
  echo "--- errors in Fulcrum's log:" && { grep -E ' (ERROR|WARN) ' "$work/fulcrum.log" | tail -30 || true; }
  echo "--- fulcrum-worker's log:" && tail -20 "$work/worker.log"
fi
exit "$status"
