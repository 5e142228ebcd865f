"""One timed SFT run on CPU: fulcrum-worker's training loop, or TRL's `SFTTrainer` with PEFT LoRA (issue 40 §4).

Run by bench/worker.sh, alternately with `--side worker` (the worker's venv) and `--side trl` (a venv with TRL), each
run a process of its own so that its peak RSS (`ru_maxrss`) is its own. Both sides train the same thing:

- the model: SmolLM2 dequantized from its GGUF the way the worker does it (`--model-dir`, the worker's GGUF cache
  directory), float32 on CPU, `--threads` torch threads;
- LoRA rank 16, alpha 32, dropout 0, all linear layers (the worker's defaults), AdamW (betas 0.9/0.999, eps 1e-8, no
  weight decay), a constant learning rate, gradient norm clipped at 1.0;
- the same chats (`dataset()`: a question and a long made-up answer, about --length tokens with the chat template),
  --batch of them per step, loss on the assistant turn only (TRL: a conversational prompt-completion data set, whose
  completion-only loss is TRL's default), no packing, no gradient accumulation or checkpointing.

Tokens per second counts every token of the batch that the model reads (its attention mask: TRL's own `num_tokens`,
the worker's sequence lengths), over the steps after --warmup. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time

import torch

WORDS = (
    "amber river lantern quiet meadow copper falcon willow harbor ember garden silver thistle marble orchard canyon "
    "velvet compass beacon juniper glacier saffron timber lagoon cobalt prairie harvest granite cedar"
).split()


def dataset(count: int, length: int, seed: int = 0) -> list[dict]:
    """`count` chats of about `length` tokens: a short question, an answer of made-up words (~1.3 tokens a word)."""
    rng = random.Random(seed)
    chats = []
    for i in range(count):
        question = f"Tell me the story of place number {i}."
        answer = " ".join(rng.choice(WORDS) for _ in range(int(length / 1.6))) + "."
        chats.append({"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]})
    return chats


def worker_side(args, chats) -> dict:
    from fulcrum_worker import data, optimizer_state, training
    from fulcrum_worker import model as models

    base = models.BaseModel("smollm2", model_path=args.model_dir)  # as `run --model-path` loads it, float32 on CPU
    tokenizer = base.tokenizer
    peft_model = base.with_adapter(None, models.LoraSettings(rank=args.rank, alpha=2 * args.rank), seed=0)
    settings = training.Settings(learning_rate=args.learning_rate, batch_size=args.batch, epochs=1, seed=0)
    optimizer, _ = optimizer_state.start(peft_model, settings.rate(0), optimizer_state.Found.none("bench"))
    sequences = [data.sft_sequence(tokenizer, c) for c in chats]
    steps = training.batches(len(sequences), settings.batch_size, settings.epochs, settings.seed)
    tokens = [sum(len(sequences[i].ids) - 1 for i in batch) for batch in steps]  # inputs: all but the last token
    ends: list[float] = []

    def report(kind, metrics):
        if kind == "gradient_step":
            ends.append(time.perf_counter())
        return False

    start = time.perf_counter()
    training.train_sft(peft_model, tokenizer, chats, settings, optimizer, report, {})
    return {"ends": [start, *ends], "tokens": tokens, "sequence_tokens": [len(s.ids) for s in sequences]}


def trl_side(args, chats) -> dict:
    import trl
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback

    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)
    model = AutoModelForCausalLM.from_pretrained(args.model_dir, dtype=torch.float32)
    rows = [{"prompt": c["messages"][:1], "completion": c["messages"][1:]} for c in chats]
    ends: list[float] = []
    tokens: list[float] = []

    class Clock(TrainerCallback):
        def on_train_begin(self, *_, **__):
            ends.append(time.perf_counter())

        def on_step_end(self, _args, state, *_, **__):
            ends.append(time.perf_counter())

        def on_log(self, _args, state, control, logs=None, **__):
            if logs and "num_tokens" in logs:
                tokens.append(float(logs["num_tokens"]))

    config = trl.SFTConfig(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch,
        gradient_accumulation_steps=1,
        num_train_epochs=1,
        learning_rate=args.learning_rate,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        optim="adamw_torch",
        max_length=args.length + 64,
        packing=False,
        gradient_checkpointing=False,
        use_cpu=True,
        bf16=False,
        fp16=False,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        dataloader_num_workers=0,
        seed=0,
        disable_tqdm=True,
    )
    lora = LoraConfig(
        r=args.rank, lora_alpha=2 * args.rank, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM"
    )
    trainer = trl.SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=lora,
        callbacks=[Clock()],
    )
    trainer.train()
    per_step = [b - a for a, b in zip([0.0, *tokens], tokens, strict=False)]  # num_tokens is cumulative
    return {"ends": ends, "tokens": per_step, "trl": trl.__version__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--side", choices=["worker", "trl"], required=True)
    parser.add_argument("--model-dir", required=True, help="the worker's Hugging Face copy of the GGUF")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2, help="first steps left out of the rate")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=128, help="about this many tokens per sequence")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output-dir", default="/tmp/bench-trl-output")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    chats = dataset(args.steps * args.batch, args.length)
    loaded = time.perf_counter()
    run = worker_side(args, chats) if args.side == "worker" else trl_side(args, chats)
    ends, tokens = run.pop("ends"), run.pop("tokens")
    if len(ends) != args.steps + 1 or len(tokens) != args.steps:
        raise SystemExit(f"{args.side}: {len(ends) - 1} step ends and {len(tokens)} token counts for {args.steps}")
    timed = range(args.warmup, args.steps)
    seconds = ends[args.steps] - ends[args.warmup]
    counted = sum(tokens[i] for i in timed)
    result = {
        "side": args.side,
        "steps": args.steps,
        "timed_steps": len(timed),
        "batch": args.batch,
        "tokens_per_step": counted / len(timed),
        "seconds_per_step": seconds / len(timed),
        "tokens_per_second": counted / seconds,
        "seconds_total": round(time.perf_counter() - loaded, 1),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "threads": args.threads,
        "torch": torch.__version__,
        **{k: v for k, v in run.items() if k != "sequence_tokens"},
    }
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
