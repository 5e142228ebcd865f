import numpy as np
import pytest
from safetensors.numpy import load_file

from fulcrum_worker.gguf_export import write_model_gguf


@pytest.fixture(scope="module")
def tiny_gguf(tiny_model_dir, tmp_path_factory):
    # not beside the shared tiny model: a model.gguf there makes the worker's checkpoints carry a GGUF adapter
    return write_model_gguf(tiny_model_dir, tmp_path_factory.mktemp("gguf") / "model.gguf")


@pytest.fixture(scope="module")
def gguf_reader(tiny_gguf):
    import gguf

    return gguf.GGUFReader(tiny_gguf)


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


@pytest.fixture(scope="module")
def trained_adapter(tiny_model_dir):
    """A random adapter of the tiny model, as `save_adapter` writes it: B is no longer zero, as after training."""
    import torch

    from fulcrum_worker.model import BaseModel, LoraSettings, save_adapter

    base = BaseModel("tiny", str(tiny_model_dir))
    peft_model = base.with_adapter(None, LoraSettings(rank=4, alpha=8))
    with torch.no_grad():
        for name, parameter in peft_model.named_parameters():
            if "lora_B" in name:
                parameter.normal_()
    files = save_adapter(peft_model, base.dtype)
    base.release(peft_model)
    return files


def test_a_peft_adapter_becomes_a_gguf_lora_adapter(tmp_path, tiny_gguf, trained_adapter):
    import gguf

    from fulcrum_worker.gguf_export import _permute_rope, read_base
    from fulcrum_worker.model import gguf_adapter

    files = trained_adapter
    (tmp_path / "adapter.gguf").write_bytes(gguf_adapter(files, read_base(tiny_gguf)))

    reader = gguf.GGUFReader(tmp_path / "adapter.gguf")
    assert field(reader, "general.type") == "adapter"
    assert field(reader, "adapter.type") == "lora"
    assert field(reader, "adapter.lora.alpha") == 8.0
    tensors = {t.name: np.asarray(t.data) for t in reader.tensors}
    assert len(tensors) == 2 * 2 * 7  # a and b of 7 linear layers in 2 blocks
    assert tensors["blk.0.attn_q.weight.lora_a"].shape == (4, 96)
    assert tensors["blk.0.ffn_down.weight.lora_b"].shape == (96, 4)

    (tmp_path / "peft.safetensors").write_bytes(files["adapter_model.safetensors"])
    peft = load_file(tmp_path / "peft.safetensors")
    prefix = "base_model.model.model.layers.0."
    a, b = peft[prefix + "self_attn.q_proj.lora_A.weight"], peft[prefix + "self_attn.q_proj.lora_B.weight"]
    # the update B @ A lands on the permuted q weight exactly as the base model's q was permuted
    gguf_delta = tensors["blk.0.attn_q.weight.lora_b"] @ tensors["blk.0.attn_q.weight.lora_a"]
    assert np.allclose(gguf_delta, _permute_rope(b @ a, 4), atol=1e-5)
    v = peft[prefix + "self_attn.v_proj.lora_B.weight"]
    assert np.array_equal(tensors["blk.0.attn_v.weight.lora_b"], v)


def test_an_adapter_is_refused_when_the_base_gguf_has_no_weight_of_its_shape(tiny_gguf, trained_adapter):
    from dataclasses import replace

    from fulcrum_worker.gguf_export import read_base
    from fulcrum_worker.model import gguf_adapter

    base = read_base(tiny_gguf)
    other = replace(base, shapes={**base.shapes, "blk.1.ffn_up.weight": (512, 96)})
    with pytest.raises(ValueError, match=r"blk.1.ffn_up.weight is \(512, 96\)"):
        gguf_adapter(trained_adapter, other)
    missing = replace(base, shapes={k: v for k, v in base.shapes.items() if k != "blk.0.attn_v.weight"})
    with pytest.raises(ValueError, match="blk.0.attn_v.weight is missing"):
        gguf_adapter(trained_adapter, missing)


def test_a_base_gguf_of_another_architecture_is_refused(tmp_path):
    import gguf

    from fulcrum_worker.gguf_export import read_base

    writer = gguf.GGUFWriter(str(tmp_path / "qwen.gguf"), "qwen2")
    writer.add_head_count(2)
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError, match="architecture qwen2; only llama"):
        read_base(tmp_path / "qwen.gguf")

    from fulcrum_worker.model import BaseModel

    # as a worker's base model: refused before any conversion
    with pytest.raises(ValueError, match="architecture qwen2; only llama"):
        BaseModel("qwen", str(tmp_path / "qwen.gguf"), gguf_cache=str(tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()
