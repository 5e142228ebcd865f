"""How long a worker's `finish` takes to land a checkpoint of one big file: a worker registers for a base model,
claims an RL job, uploads SIZE_MIB of random bytes as `adapter_model.safetensors` and finishes; the time of `finish`
(the server turning the uploads into the checkpoint's artifact version) is reported, RUNS times, with the upload's
for scale. Uses fulcrum-worker's own protocol client.

    worker/.venv/bin/python bench/checkpoint_finish.py URL KEY BASE_MODEL [--size-mib 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import requests
from fulcrum_worker import protocol


def one_run(url: str, key: str, base_model: str, worker_id: str, server: protocol.Server, content: bytes, i: int):
    headers = {"Authorization": f"Bearer {key}"}
    model = requests.post(
        f"{url}/v1/preview/models",
        headers=headers,
        json={"entity": "admin", "project": "bench", "name": f"finish-{i}-{time.time_ns()}", "base_model": base_model},
        timeout=60,
    )
    model.raise_for_status()
    turn = [{"role": "user", "content": "hi"}]
    choice = {"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": "hello"}}
    groups = [{"trajectories": [{"messages_and_choices": [*turn, choice], "reward": r} for r in (0, 1)]}]
    requests.post(
        f"{url}/v1/preview/training-jobs",
        headers=headers,
        json={"model_id": model.json()["id"], "trajectory_groups": groups},
        timeout=60,
    ).raise_for_status()
    claim = server.claim(worker_id, wait=20)
    if claim is None:
        raise SystemExit("no job to claim")
    job = server.job(claim)
    started = time.perf_counter()
    job.upload("adapter_model.safetensors", content)
    uploaded = time.perf_counter()
    job.upload("adapter_config.json", b"{}")
    before_finish = time.perf_counter()
    job.finish({"loss": 0.0})
    finished = time.perf_counter()
    return {"upload_s": uploaded - started, "finish_s": finished - before_finish}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("key")
    parser.add_argument("base_model")
    parser.add_argument("--size-mib", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default="target/bench-checkpoint-finish.json")
    args = parser.parse_args()
    server = protocol.Server(args.url, args.key, timeout=600)
    worker = server.register(f"bench-finish-{os.getpid()}", [args.base_model])
    content = os.urandom(args.size_mib * 1024 * 1024)
    runs = []
    for i in range(args.runs):
        run = one_run(args.url, args.key, args.base_model, worker["id"], server, content, i)
        print(f"  run {i + 1}: upload {run['upload_s']:.2f} s, finish {run['finish_s']:.2f} s")
        runs.append(run)
    result = {
        "size_mib": args.size_mib,
        "runs": runs,
        "finish_median_s": statistics.median(r["finish_s"] for r in runs),
        "upload_median_s": statistics.median(r["upload_s"] for r in runs),
    }
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as out:
        json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
