"""Held-out SFT loss of a GGUF base, or of the base plus a PEFT adapter, with fulcrum-worker's own code.

Run by bench/rl-learns.py with the worker's Python. The base is the worker's dequantized Hugging Face copy of the GGUF
(`gguf_base.hf_directory`, the cache the worker itself fills); each chat is tokenised with `data.sft_sequence` (the
chat template, loss on the assistant turn and its end token) and scored with `losses.sft_loss`, as the worker trains.
--data is a JSON object of named lists of chats; prints one JSON line: each list's mean loss per trained token.
"""

from __future__ import annotations

import argparse
import json

import torch
from fulcrum_worker import data, gguf_base, losses, training
from transformers import AutoModelForCausalLM, AutoTokenizer


def mean_loss(model, tokenizer, chats) -> float:
    sequences = [data.sft_sequence(tokenizer, chat) for chat in chats]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    batch = training.pad(sequences, pad_id, model.device)
    with torch.no_grad():
        logits = model(input_ids=batch["inputs"], attention_mask=batch["attention"]).logits
    return float(losses.sft_loss(logits, batch["targets"], batch["mask"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--gguf-cache")
    parser.add_argument("--adapter", help="a PEFT adapter directory (adapter_config.json, adapter_model.safetensors)")
    parser.add_argument("--data", required=True)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    source = gguf_base.hf_directory(args.gguf, args.gguf_cache)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32)
    if args.adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, args.adapter)
    model.eval()
    with open(args.data, encoding="utf-8") as f:
        sets = json.load(f)
    print(json.dumps({name: round(mean_loss(model, tokenizer, chats), 4) for name, chats in sets.items()}))


if __name__ == "__main__":
    main()
