"""SFT tokens per second of `fulcrum-worker run` as 1 and as 2 processes (`torchrun --nproc_per_node N`, DDP), each
training the same job from a fake server (worker/tests/fake_server.py: the worker protocol answered in memory). The
figure is the job's own `gradient_step` events' `tokens_per_second` (every token of the step's batch, over all ranks,
per second of the step), median over the steps after --warmup. Prints one line per run and a table.

Usage: worker/.venv/bin/python bench/worker_distributed.py [--model-path DIR] [--processes 1 2] [--steps 12]
(without --model-path: the tiny model of `make-tiny-model`, written to a temporary directory)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "worker" / "tests"))

from fake_server import FakeServer, QueuedJob  # noqa: E402

WORDS = "amber river lantern quiet meadow copper falcon willow harbor ember garden silver thistle marble".split()


def job_input(steps: int, batch: int, length: int) -> dict:
    examples = []
    for i in range(steps * batch):
        answer = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(int(length / 1.6)))
        examples.append(
            {"messages": [{"role": "user", "content": f"Story {i}?"}, {"role": "assistant", "content": answer}]}
        )
    config = {"batch_size": batch, "epochs": 1, "learning_rate": 1e-4}
    return {"kind": "sft", "config": config, "examples": examples}


def run(processes: int, model_path: str, args) -> dict:
    with FakeServer() as server:
        job = server.add(QueuedJob("sft", job_input(args.steps, args.batch, args.length)))
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
        command += ["-m", "fulcrum_worker", "run", "--server", server.url, "--api-key", "k", "--base-model", "bench"]
        command += ["--model-path", model_path, "--threads", str(args.threads), "--wait", "1", "--max-jobs", "1"]
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONPATH": str(ROOT / "worker" / "src")}
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0 or job.failed:
            raise SystemExit(f"{processes} processes: {job.failed}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    steps = job.steps[args.warmup :]
    return {
        "processes": processes,
        "threads_per_process": args.threads,
        "tokens_per_second": statistics.median(s["tokens_per_second"] for s in steps),
        "tokens_per_second_per_rank": statistics.median(s["tokens_per_second_per_rank"] for s in steps),
        "seconds_per_step": statistics.median(s["step_time"] for s in steps),
        "tokens_per_step": statistics.median(s["tokens_per_second"] * s["step_time"] for s in steps),
        "wall_seconds": time.monotonic() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-path", help="a Hugging Face model directory (default: the tiny model)")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fulcrum-bench-") as directory:
        model_path = args.model_path
        if model_path is None:
            model_path = str(Path(directory, "tiny"))
            subprocess.run(
                [sys.executable, "-m", "fulcrum_worker", "make-tiny-model", model_path],
                check=True,
                capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT / "worker" / "src")},
            )
        results = []
        for processes in args.processes:
            result = run(processes, model_path, args)
            print(f"RESULT {result}", flush=True)
            results.append(result)
    print("\n| processes x threads | tokens/s (all ranks) | tokens/s per rank | s per step | tokens per step |")
    print("|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['processes']} x {r['threads_per_process']} | {r['tokens_per_second']:,.0f} | "
            f"{r['tokens_per_second_per_rank']:,.0f} | {r['seconds_per_step']:.3f} | {r['tokens_per_step']:,.0f} |"
        )
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"{os.cpu_count()} cores; load average now {load}")


if __name__ == "__main__":
    main()
