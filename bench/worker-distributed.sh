#!/usr/bin/env bash
# Issue 54: SFT tokens per second of one fulcrum-worker job trained by 1 and by 2 processes (torchrun, DDP, gloo on
# CPU), the real `fulcrum-worker run` against a fake server (bench/worker_distributed.py). On this machine 2 CPU
# processes share its cores: with one thread each, 2 processes use 2 cores where 1 process uses 1, so the figure says
# what data parallelism costs and gives on CPU, not what it gives on GPUs (there each rank has its own device: see
# docs/deployment.md). Smoke: STEPS=4 bench/worker-distributed.sh
# Usage: bench/worker-distributed.sh [model-dir]   (default: the tiny model; e.g. target/fulcrum-worker/gguf-cache/<sha>
#                                                  for SmolLM2, as bench/worker.sh converts it)
#   STEPS=12 WARMUP=2 BATCH=8 LENGTH=128 THREADS=1 WORKER_VENV=dir (default worker/.venv)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/model-lib.sh
source bench/model-lib.sh
resolve_worker_venv
model=()
[[ -n ${1:-} ]] && model=(--model-path "$1")
"$worker_venv/bin/python" bench/worker_distributed.py "${model[@]}" --steps "${STEPS:-12}" --warmup "${WARMUP:-2}" \
  --batch "${BATCH:-8}" --length "${LENGTH:-128}" --threads "${THREADS:-1}" --processes 1 2
