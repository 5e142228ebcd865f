"""`fulcrum-worker`: make-tiny-model, run, generate."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

GGUF_CACHE_HELP = (
    "where a .gguf model path's Hugging Face weights are cached (default: $FULCRUM_WORKER_GGUF_CACHE, else "
    "$XDG_CACHE_HOME/fulcrum-worker/gguf or ~/.cache/fulcrum-worker/gguf)"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fulcrum-worker", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    tiny = commands.add_parser("make-tiny-model", help="write a tiny random Llama model with a real BPE tokenizer")
    tiny.add_argument("directory")
    tiny.add_argument("--seed", type=int, default=0)
    tiny.add_argument("--gguf", action="store_true", help="also write the same model as DIR/model.gguf (llama.cpp)")

    run = commands.add_parser("run", help="register with a Fulcrum server and train its jobs")
    run.add_argument("--server", required=True, help="Fulcrum's base URL, e.g. http://localhost:8080")
    run.add_argument("--api-key", required=True, help="a server administrator's API key")
    run.add_argument("--base-model", required=True, help="the base model id (fulcrum.training.worker-base-models)")
    run.add_argument(
        "--model-path",
        help="a local Hugging Face model directory or a .gguf file (converted once, cached); else the hub, by id",
    )
    run.add_argument("--name", help="the worker's name (default: host-pid)")
    run.add_argument("--lora-rank", type=int, default=16, help="rank of new adapters (default 16)")
    run.add_argument("--lora-alpha", type=int, default=32, help="alpha of new adapters (default 32)")
    run.add_argument("--max-jobs", type=int, help="stop after this many jobs (default: run forever)")
    run.add_argument(
        "--max-tinker-models",
        type=int,
        default=4,
        help="Tinker training clients held at once, each its own LoRA adapter and optimizer state on the one base "
        "(default 4; 0: none, jobs only)",
    )
    run.add_argument("--wait", type=int, default=20, help="long-poll seconds of a claim")
    run.add_argument("--threads", type=int, help="CPU threads of torch (default: torch's choice)")
    run.add_argument("--gguf-cache", help=GGUF_CACHE_HELP)
    run.add_argument(
        "--deterministic",
        action="store_true",
        help="torch's deterministic algorithms only (slower on GPUs): the same job on the same processes trains the "
        "same adapter bit for bit",
    )
    run.add_argument(
        "--micro-batch-size",
        type=int,
        help="sequences per forward and backward on each process; a step's batch is accumulated over them "
        "(default: a process's whole share of the batch)",
    )
    run.add_argument(
        "--shard",
        action="store_true",
        help="under torchrun: shard the model over the processes (FSDP), for a base that does not fit one device; "
        "else every process holds the whole model and trains its share of each batch (DDP)",
    )
    run.add_argument(
        "--dist-timeout",
        type=float,
        default=600,
        help="under torchrun: seconds a collective waits for the other processes before the group counts as broken "
        "(default 600)",
    )

    generate = commands.add_parser("generate", help="answer chats (JSON lines of {messages}) with a model + adapter")
    generate.add_argument("--model-path", required=True, help="a Hugging Face model directory or a .gguf file")
    generate.add_argument("--adapter", help="a PEFT adapter directory")
    generate.add_argument("--input", default="-", help="JSON lines of {messages}; - for stdin")
    generate.add_argument("--samples", type=int, default=1, help="answers per chat")
    generate.add_argument("--temperature", type=float, default=0.0, help="0 for greedy")
    generate.add_argument("--max-new-tokens", type=int, default=32)
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--threads", type=int, help="CPU threads of torch (default: torch's choice)")
    generate.add_argument("--gguf-cache", help=GGUF_CACHE_HELP)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if args.command == "make-tiny-model":
        from .tiny import make_tiny_model

        facts = make_tiny_model(args.directory, seed=args.seed, gguf=args.gguf)
        print(json.dumps({"directory": args.directory, **facts}))
        return 0
    if args.command == "run":
        import torch

        from . import distributed
        from .model import LoraSettings
        from .runner import serve

        if args.threads:
            torch.set_num_threads(args.threads)
        if args.deterministic:
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS's deterministic mode, before CUDA
            torch.use_deterministic_algorithms(True)
        # torchrun's environment (RANK, WORLD_SIZE, ...) makes this process one rank of a group; else a group of one
        group = distributed.start(shard=args.shard, timeout_seconds=args.dist_timeout)
        try:
            serve(
                args.server,
                args.api_key,
                args.base_model,
                model_path=args.model_path,
                name=args.name,
                lora=LoraSettings(rank=args.lora_rank, alpha=args.lora_alpha),
                max_jobs=args.max_jobs,
                wait=args.wait,
                gguf_cache=args.gguf_cache,
                group=group,
                micro_batch=args.micro_batch_size,
                max_tinker_models=args.max_tinker_models,
            )
        except BaseException:
            distributed.stop(group)
            raise
        distributed.finish(group)
        return 0
    import torch

    from .generate import complete, load

    if args.threads:
        torch.set_num_threads(args.threads)
    model, tokenizer = load(args.model_path, args.adapter, args.gguf_cache)
    source = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")  # noqa: SIM115
    with source:
        for n, line in enumerate(source):
            if not line.strip():
                continue
            chat = json.loads(line)
            for s in range(args.samples):
                answer = complete(
                    model,
                    tokenizer,
                    chat["messages"],
                    max_new_tokens=args.max_new_tokens,
                    temperature=args.temperature,
                    seed=args.seed * 1_000_003 + n * 1000 + s,
                )
                print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
