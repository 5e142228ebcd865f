"""`fulcrum-worker make-tiny-model`: a tiny random Llama with a real byte-level BPE tokenizer, built offline."""

from __future__ import annotations

import json
import random
from pathlib import Path

# ChatML, with tools listed in the system turn and tool calls as <tool_call>{json}</tool_call>.
CHAT_TEMPLATE = (
    "{%- if tools -%}"
    "{{ '<|im_start|>system\\n' }}"
    "{%- if messages[0]['role'] == 'system' -%}{{ messages[0]['content'] + '\\n' }}{%- endif -%}"
    "{{ '# Tools\\n' }}"
    "{%- for tool in tools -%}{{ (tool | tojson) + '\\n' }}{%- endfor -%}"
    "{{ '<|im_end|>\\n' }}"
    "{%- endif -%}"
    "{%- for message in messages -%}"
    "{%- if not (tools and message['role'] == 'system') -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string -%}{{ message['content'] }}{%- endif -%}"
    "{%- if message['tool_calls'] -%}{%- for call in message['tool_calls'] -%}"
    "{{ '<tool_call>' + ((call['function'] if call['function'] is defined else call) | tojson) + '</tool_call>' }}"
    "{%- endfor -%}{%- endif -%}"
    "{{ '<|im_end|>\\n' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]

_WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one had by word "
    "but not what all were we when your can said there use an each which she do how their if will up other about "
    "out many then them these so some her would make like him into time has look two more write go see number no "
    "way could people my than first water been call who oil its now find long down day did get come made may part "
    "capital country city answer question name animal secret say tell something what is the of hello hi yes no "
    "system user assistant tool function arguments result weather search zero one two three four five six seven "
    "eight nine ten digit number count add sum plus minus times equals paris tokyo rome madrid berlin cairo lima"
).split()


def _corpus(seed: int) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(3000):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 12))]
        if rng.random() < 0.3:
            words.append(str(rng.randint(0, 9999)))
        line = " ".join(words)
        lines.append(line.capitalize() + rng.choice([".", "?", "!", ""]))
    lines.append('{"name": "get_weather", "arguments": {"city": "Paris"}}')
    return lines


def build_tokenizer(vocab_size: int, seed: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(seed), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        model_max_length=2048,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def make_tiny_model(
    directory: str | Path,
    *,
    seed: int = 0,
    vocab_size: int = 1024,
    hidden_size: int = 96,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    intermediate_size: int = 256,
    output_std: float = 0.25,
    initializer_range: float = 0.02,
    gguf: bool = False,
) -> dict[str, int]:
    """Writes the model and tokenizer to `directory` (a Hugging Face model directory); the same seed, the same files.

    With `gguf`, also `directory/model.gguf`: the same weights, tokenizer and chat template for llama.cpp.
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(vocab_size, seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=2048,
        rms_norm_eps=1e-6,
        initializer_range=initializer_range,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        # A trained model's output layer separates tokens by a wide margin; at the usual 0.02 a frozen random
        # output layer under the frozen final norm caps every logit near 2, so no adapter could make an answer likely.
        model.lm_head.weight.normal_(0.0, output_std)
    model.generation_config = GenerationConfig(
        eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id, do_sample=False
    )
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    parameters = sum(p.numel() for p in model.parameters())
    facts = {"parameters": parameters, "vocab_size": config.vocab_size}
    (directory / "fulcrum-tiny-model.json").write_text(json.dumps({"seed": seed, **facts}, indent=2) + "\n")
    if gguf:
        from .gguf_export import write_model_gguf

        write_model_gguf(directory)
    return facts
