"""Sampling from a base model with an adapter: greedy answers for checks, sampled rollouts with logprobs for RL."""

from __future__ import annotations

from typing import Any

import torch


def load(model_path: str, adapter: str | None, gguf_cache: str | None = None):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from . import gguf_base

    if gguf_base.is_gguf_file(model_path):
        model_path = str(gguf_base.hf_directory(model_path, gguf_cache))
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    model.eval()
    return model, tokenizer


@torch.no_grad()
def complete(
    model,
    tokenizer,
    messages: list[dict[str, Any]],
    *,
    max_new_tokens: int = 32,
    temperature: float = 0.0,
    seed: int = 0,
) -> dict[str, Any]:
    """One answer: its text, finish reason and the log-probability of each sampled token (as a Choice carries)."""
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    ids = tokenizer.encode(prompt, add_special_tokens=False)
    eos = tokenizer.eos_token_id
    generator = torch.Generator().manual_seed(seed)
    tokens: list[int] = []
    logprobs: list[dict[str, Any]] = []
    finish = "length"
    past = None
    step_input = torch.tensor([ids])
    for _ in range(max_new_tokens):
        out = model(input_ids=step_input, past_key_values=past, use_cache=True)
        past = out.past_key_values
        logits = out.logits[0, -1].float()
        if temperature > 0:
            probs = torch.softmax(logits / temperature, dim=-1)
            token = int(torch.multinomial(probs, 1, generator=generator))
        else:
            token = int(torch.argmax(logits))
        logprob = float(torch.log_softmax(logits, dim=-1)[token])
        if token == eos:
            finish = "stop"
            break
        tokens.append(token)
        # as vLLM with return_tokens_as_token_ids: the exact token, whatever text it decodes to
        logprobs.append(
            {"token": f"token_id:{token}", "logprob": logprob, "bytes": list(tokenizer.decode([token]).encode())}
        )
        step_input = torch.tensor([[token]])
    return {
        "text": tokenizer.decode(tokens),
        "finish_reason": finish,
        "logprobs": {"content": logprobs},
    }
