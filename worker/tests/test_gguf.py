import numpy as np
import pytest
from safetensors.numpy import load_file

from fulcrum_worker.gguf_export import write_model_gguf


@pytest.fixture(scope="module")
def gguf_reader(tiny_model_dir):
    import gguf

    return gguf.GGUFReader(write_model_gguf(tiny_model_dir))


def field(reader, key):
    return reader.fields[key].contents()


def test_the_gguf_is_a_llama_with_the_models_hyperparameters(gguf_reader, tiny_model_dir):
    import json

    config = json.loads((tiny_model_dir / "config.json").read_text())
    assert field(gguf_reader, "general.architecture") == "llama"
    assert field(gguf_reader, "llama.block_count") == config["num_hidden_layers"]
    assert field(gguf_reader, "llama.embedding_length") == config["hidden_size"]
    assert field(gguf_reader, "llama.feed_forward_length") == config["intermediate_size"]
    assert field(gguf_reader, "llama.attention.head_count") == config["num_attention_heads"]
    assert field(gguf_reader, "llama.attention.head_count_kv") == config["num_key_value_heads"]
    assert field(gguf_reader, "llama.rope.dimension_count") == config["hidden_size"] // config["num_attention_heads"]


def test_its_tensors_are_the_same_weights_under_llama_cpp_names(gguf_reader, tiny_model_dir):
    weights = load_file(tiny_model_dir / "model.safetensors")
    tensors = {t.name: t for t in gguf_reader.tensors}
    expected = {"token_embd.weight", "output_norm.weight", "output.weight"}
    for i in range(2):
        for part in (
            "attn_norm",
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "ffn_norm",
            "ffn_gate",
            "ffn_up",
            "ffn_down",
        ):
            expected.add(f"blk.{i}.{part}.weight")
    assert set(tensors) == expected
    embd = tensors["token_embd.weight"]
    assert np.array_equal(np.asarray(embd.data), weights["model.embed_tokens.weight"])
    assert np.array_equal(
        np.asarray(tensors["blk.1.ffn_down.weight"].data), weights["model.layers.1.mlp.down_proj.weight"]
    )
    # q and k are permuted for GGML's rope, so only their values (not their order) are the same
    q = np.asarray(tensors["blk.0.attn_q.weight"].data)
    hf_q = weights["model.layers.0.self_attn.q_proj.weight"]
    assert q.shape == hf_q.shape and not np.array_equal(q, hf_q)
    assert np.array_equal(np.sort(q, axis=None), np.sort(hf_q, axis=None))


def test_it_carries_the_tokenizer_and_chat_template(gguf_reader, tokenizer):
    tokens = field(gguf_reader, "tokenizer.ggml.tokens")
    assert len(tokens) == len(tokenizer)
    assert field(gguf_reader, "tokenizer.ggml.model") == "gpt2"
    assert tokens[field(gguf_reader, "tokenizer.ggml.eos_token_id")] == "<|im_end|>"
    assert tokens[tokenizer.convert_tokens_to_ids("<|im_start|>")] == "<|im_start|>"
    assert len(field(gguf_reader, "tokenizer.ggml.merges")) > 100
    assert field(gguf_reader, "tokenizer.chat_template") == tokenizer.chat_template


def test_make_tiny_model_gguf_writes_it_beside_the_hf_files(tmp_path):
    from fulcrum_worker.cli import main

    assert main(["make-tiny-model", str(tmp_path), "--gguf"]) == 0
    assert (tmp_path / "model.gguf").stat().st_size > 1_000_000
    assert (tmp_path / "model.safetensors").exists()
