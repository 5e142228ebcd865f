"""Hugging Face Llama directories and PEFT adapters written as GGUF, the files llama.cpp (Fulcrum's local engine) reads.

The keys and tensor names follow llama.cpp's own converters (`convert_hf_to_gguf.py` for a model,
`convert_lora_to_gguf.py` for an adapter): a llama model with a byte-level BPE ("gpt2") tokenizer, every tensor in
float32 (these are tiny models; a real model is converted with llama.cpp's tools and quantized).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ARCHITECTURE = "llama"


def _permute_rope(weights: np.ndarray, heads: int) -> np.ndarray:
    # Hugging Face orders each head's rotary dimensions in two halves; GGML's llama rope wants them interleaved
    # (LlamaModel.permute in convert_hf_to_gguf.py). Applies to q/k projections and to a LoRA B matrix of them.
    return (
        weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


_LAYER_TENSORS = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}


def gguf_tensor_name(hf_name: str) -> str | None:
    """The GGUF name of a Hugging Face Llama tensor (without `.weight`), None for one llama.cpp does not use."""
    name = hf_name.removeprefix("model.")
    if name == "embed_tokens":
        return "token_embd"
    if name == "norm":
        return "output_norm"
    if name == "lm_head":
        return "output"
    parts = name.split(".", 2)
    if len(parts) == 3 and parts[0] == "layers" and parts[2] in _LAYER_TENSORS:
        return f"blk.{parts[1]}.{_LAYER_TENSORS[parts[2]]}"
    return None


def _tokenizer_metadata(writer, directory: Path, vocab_size: int) -> None:
    import gguf

    tokenizer = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    config = json.loads((directory / "tokenizer_config.json").read_text(encoding="utf-8"))
    if tokenizer["model"]["type"] != "BPE":
        raise ValueError("only byte-level BPE tokenizers are written as GGUF here")
    vocab: dict[str, int] = dict(tokenizer["model"]["vocab"])
    added = {t["content"]: t for t in tokenizer.get("added_tokens", [])}
    for content, token in added.items():
        vocab[content] = token["id"]
    by_id = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(vocab_size):
        token = by_id.get(i)
        if token is None:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        elif token in added:
            tokens.append(token)
            types.append(gguf.TokenType.CONTROL if added[token].get("special") else gguf.TokenType.USER_DEFINED)
        else:
            tokens.append(token)
            types.append(gguf.TokenType.NORMAL)
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"].get("merges", [])]
    writer.add_tokenizer_model("gpt2")
    # The GPT-2 split regex: the one the tokenizers library's ByteLevel pre-tokenizer applies.
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    for key, add in (
        ("eos_token", writer.add_eos_token_id),
        ("pad_token", writer.add_pad_token_id),
        ("bos_token", writer.add_bos_token_id),
    ):
        token = config.get(key)
        if isinstance(token, dict):
            token = token.get("content")
        if token is not None and token in vocab:
            add(vocab[token])
    if "<|im_end|>" in vocab:
        writer.add_eot_token_id(vocab["<|im_end|>"])
    writer.add_add_bos_token(False)
    template = config.get("chat_template")
    if template is None and (directory / "chat_template.jinja").exists():
        template = (directory / "chat_template.jinja").read_text(encoding="utf-8")
    if template:
        writer.add_chat_template(template)


def write_model_gguf(directory: str | Path, out: str | Path | None = None, *, name: str = "fulcrum-tiny") -> Path:
    """Writes the Llama model of a Hugging Face directory, with its tokenizer and chat template, as one GGUF file."""
    import gguf
    from safetensors.numpy import load_file

    directory = Path(directory)
    out = Path(out) if out else directory / "model.gguf"
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "llama":
        raise ValueError(f"only llama models are written as GGUF here, not {config.get('model_type')}")
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or heads
    hidden = config["hidden_size"]
    weights = load_file(directory / "model.safetensors")
    if "lm_head.weight" not in weights:  # tied embeddings
        weights["lm_head.weight"] = weights["model.embed_tokens.weight"]

    writer = gguf.GGUFWriter(str(out), ARCHITECTURE)
    writer.add_name(name)
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(config.get("max_position_embeddings", 2048))
    writer.add_embedding_length(hidden)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(config.get("rms_norm_eps", 1e-6))
    writer.add_rope_freq_base(config.get("rope_theta", 10000.0))
    writer.add_rope_dimension_count(config.get("head_dim") or hidden // heads)
    writer.add_vocab_size(config["vocab_size"])
    _tokenizer_metadata(writer, directory, config["vocab_size"])
    for hf_name in sorted(weights):
        base = gguf_tensor_name(hf_name.removesuffix(".weight"))
        if base is None:
            continue
        tensor = weights[hf_name].astype(np.float32)
        if base.endswith("attn_q"):
            tensor = _permute_rope(tensor, heads)
        elif base.endswith("attn_k"):
            tensor = _permute_rope(tensor, kv_heads)
        writer.add_tensor(f"{base}.weight", tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


@dataclass(frozen=True)
class GgufBase:
    """What an adapter is written against: the base GGUF's architecture, attention heads and tensor shapes."""

    path: Path
    architecture: str
    head_count: int
    head_count_kv: int
    shapes: dict[str, tuple[int, ...]]  # tensor name to shape, rows first (a weight's out x in, as in PyTorch)


def read_base(path: str | Path) -> GgufBase:
    """The facts of a base model's GGUF that its adapters must match; refuses an architecture not written here."""
    import gguf

    reader = gguf.GGUFReader(path)
    architecture = reader.fields["general.architecture"].contents()
    if architecture != ARCHITECTURE:
        raise ValueError(
            f"{path}: a GGUF of architecture {architecture}; only {ARCHITECTURE} adapters are written as GGUF here"
        )
    heads = reader.fields[f"{architecture}.attention.head_count"].contents()
    kv_field = reader.fields.get(f"{architecture}.attention.head_count_kv")
    shapes = {t.name: tuple(int(n) for n in reversed(t.shape)) for t in reader.tensors}
    return GgufBase(Path(path), architecture, heads, kv_field.contents() if kv_field else heads, shapes)


def write_lora_gguf(adapter_dir: str | Path, base: GgufBase, out: str | Path) -> Path:
    """Writes a PEFT LoRA adapter of a Llama model as a GGUF LoRA adapter that llama.cpp applies to the base GGUF.

    As `convert_lora_to_gguf.py` writes it: `general.type` adapter, `adapter.type` lora, `adapter.lora.alpha`, and per
    adapted linear layer `<gguf name>.weight.lora_a` (rank x in) and `.lora_b` (out x rank), B of q/k permuted for
    GGML's rope as the base weights are (with the base GGUF's head counts, as transformers un-permuted them when it
    read a GGUF base); llama.cpp scales by alpha / rank as PEFT does. Every tensor names a weight of the base GGUF
    of the adapted layer's shape: llama.cpp matches the adapter to the base by these names.
    """
    import gguf
    from safetensors.numpy import load_file

    adapter_dir = Path(adapter_dir)
    adapter = json.loads((adapter_dir / "adapter_config.json").read_text(encoding="utf-8"))
    if adapter.get("use_dora") or adapter.get("rank_pattern") or adapter.get("alpha_pattern"):
        raise ValueError("only plain LoRA adapters (one rank and alpha, no DoRA) are written as GGUF")
    weights = load_file(adapter_dir / "adapter_model.safetensors")
    writer = gguf.GGUFWriter(str(out), base.architecture)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(adapter["lora_alpha"]))
    for name in sorted(weights):
        if ".lora_A." not in name:
            continue
        module = name.split(".lora_A.")[0].removeprefix("base_model.model.")
        base_name = gguf_tensor_name(module)
        if base_name is None:
            raise ValueError(f"the adapter changes {module}, which llama.cpp's llama has no tensor for")
        lora_a = weights[name].astype(np.float32)
        lora_b = weights[name.replace(".lora_A.", ".lora_B.")].astype(np.float32)
        shape = base.shapes.get(f"{base_name}.weight")
        if shape != (lora_b.shape[0], lora_a.shape[1]):
            raise ValueError(
                f"the adapter changes {module} ({lora_b.shape[0]} x {lora_a.shape[1]}), but the base GGUF's "
                f"{base_name}.weight is {shape or 'missing'}"
            )
        if base_name.endswith("attn_q"):
            lora_b = _permute_rope(lora_b, base.head_count)
        elif base_name.endswith("attn_k"):
            lora_b = _permute_rope(lora_b, base.head_count_kv)
        writer.add_tensor(f"{base_name}.weight.lora_a", lora_a)
        writer.add_tensor(f"{base_name}.weight.lora_b", lora_b)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return Path(out)
