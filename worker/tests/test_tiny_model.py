import hashlib

import torch
from transformers import AutoModelForCausalLM

from fulcrum_worker.tiny import make_tiny_model


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_tiny_model_is_a_small_llama_that_transformers_loads(tiny_model_dir, tokenizer):
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert model.config.model_type == "llama"
    assert 200_000 < sum(p.numel() for p in model.parameters()) < 5_000_000
    assert model.config.vocab_size == len(tokenizer)
    assert tokenizer.eos_token == "<|im_end|>"


def test_its_tokenizer_is_byte_level_bpe_that_round_trips_any_text(tokenizer):
    text = 'What is the capital of Perú? 42 🙂 \t{"a": 1}'
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids) == text
    assert len(ids) < len(text.encode())  # merges were learnt


def test_its_chat_template_renders_chatml_with_tools(tokenizer):
    messages = [{"role": "user", "content": "hi"}]
    assert (
        tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    text = tokenizer.apply_chat_template(
        [*messages, {"role": "assistant", "content": "", "tool_calls": [call]}], tools=tools, tokenize=False
    )
    assert text.startswith('<|im_start|>system\n# Tools\n{"type": "function"')
    assert (
        '<|im_start|>assistant\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>' in text
    )


def test_the_same_seed_writes_the_same_files(tmp_path, tiny_model_dir):
    make_tiny_model(tmp_path)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert digest(tmp_path / name) == digest(tiny_model_dir / name)


def test_a_new_adapter_starts_from_the_weights_its_seed_gives(tiny_model_dir):
    from fulcrum_worker.model import BaseModel, LoraSettings

    base = BaseModel("tiny", str(tiny_model_dir))

    def initial_weights(seed: int) -> dict[str, torch.Tensor]:
        peft_model = base.with_adapter(None, LoraSettings(rank=4, alpha=8), seed)
        weights = {n: p.detach().clone() for n, p in peft_model.named_parameters() if "lora_A" in n}
        base.release(peft_model)
        return weights

    first, again, other = initial_weights(7), initial_weights(7), initial_weights(8)
    assert first and first.keys() == again.keys() == other.keys()
    assert all(torch.equal(first[n], again[n]) for n in first)
    assert not all(torch.equal(first[n], other[n]) for n in first)
