"""Training tokens per second of fulcrum-worker's training loop on this machine's CPU (no server: the protocol's
share is measured by FulcrumWorkerTest, see bench/README.md).

    worker/.venv/bin/python bench/worker_training.py [--steps N] [--only tiny|0.5b] [--threads N]

Two configurations, random weights, nothing downloaded: the tiny model of `fulcrum-worker make-tiny-model`, and a
0.5B-parameter Llama shaped like Qwen2.5-0.5B (24 layers, hidden 896, 14 heads / 2 KV heads, MLP 4864, vocabulary
151,936). LoRA rank 16 on all linear layers, SFT steps of 128-token sequences (4 per step for the tiny model, 1 for
0.5B), all tokens trained.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import torch
from fulcrum_worker import data, losses, optimizer_state, training
from fulcrum_worker import model as models
from fulcrum_worker.tiny import make_tiny_model
from transformers import LlamaConfig, LlamaForCausalLM

HALF_B = dict(
    vocab_size=151936,
    hidden_size=896,
    intermediate_size=4864,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    tie_word_embeddings=True,
)


def measure(name: str, peft_model, vocab: int, steps: int, batch: int = 4, length: int = 128) -> dict:
    settings = training.Settings(learning_rate=1e-4)
    optimizer, _ = optimizer_state.start(peft_model, settings.rate(0), optimizer_state.Found.none("bench"))
    generator = torch.Generator().manual_seed(0)
    sequences = [
        data.Sequence(
            ids=torch.randint(0, vocab, (length + 1,), generator=generator).tolist(), mask=[True] * (length + 1)
        )
        for _ in range(batch)
    ]
    peft_model.train()
    times = []
    for _ in range(steps + 1):  # the first step warms up
        start = time.perf_counter()
        inputs = training.pad(sequences, 0, peft_model.device)
        loss = losses.sft_loss(training._logits(peft_model, inputs), inputs["targets"], inputs["mask"])
        training._step(peft_model, optimizer, loss, settings, 1e-4)
        times.append(time.perf_counter() - start)
    step = sum(times[1:]) / steps
    parameters = sum(p.numel() for p in peft_model.parameters())
    return {
        "model": name,
        "parameters": parameters,
        "threads": torch.get_num_threads(),
        "tokens_per_step": batch * length,
        "seconds_per_step": round(step, 4),
        "tokens_per_second": round(batch * length / step, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--only", choices=["tiny", "0.5b"])
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    lora = models.LoraSettings()
    if args.only in (None, "tiny"):
        with tempfile.TemporaryDirectory() as directory:
            make_tiny_model(directory)
            base = models.BaseModel("tiny", directory)
            peft_model = base.with_adapter(None, lora)
            print(json.dumps(measure("tiny", peft_model, len(base.tokenizer), args.steps * 4)), flush=True)
    if args.only in (None, "0.5b"):
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(**HALF_B))
        model.requires_grad_(False)
        from peft import LoraConfig, get_peft_model

        peft_model = get_peft_model(
            model, LoraConfig(r=lora.rank, lora_alpha=lora.alpha, target_modules="all-linear", task_type="CAUSAL_LM")
        )
        print(json.dumps(measure("llama-0.5b (Qwen2.5-0.5B shape)", peft_model, HALF_B["vocab_size"], 2, batch=1)))


if __name__ == "__main__":
    main()
