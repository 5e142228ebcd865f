"""Loading the base model and its LoRA adapter; saving the adapter as the files vLLM loads."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from .gguf_export import GgufBase

ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def dtype_for(dev: torch.device) -> torch.dtype:
    # bf16 on GPUs; CPUs train in float32 (bf16 matmuls there are slow and lossy)
    return torch.bfloat16 if dev.type == "cuda" else torch.float32


@dataclass
class LoraSettings:
    rank: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: str | list[str] = "all-linear"

    def config(self):
        """PEFT's configuration of a new adapter of these settings."""
        from peft import LoraConfig

        return LoraConfig(
            r=self.rank,
            lora_alpha=self.alpha,
            lora_dropout=self.dropout,
            target_modules=self.target_modules,
            task_type="CAUSAL_LM",
        )


class BaseModel:
    """The base model, loaded once per worker; each job wraps it in a LoRA adapter and unwraps it afterwards."""

    def __init__(
        self, model_id: str, model_path: str | None = None, gguf_cache: str | None = None, on_cpu: bool = False
    ) -> None:
        """`on_cpu`: the weights stay in memory, for FSDP to shard them onto the devices (`sharded.ShardedBase`)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from . import gguf_base
        from .gguf_export import read_base

        # A base model that is (or also exists as) a GGUF (a .gguf model path, or make-tiny-model --gguf's model.gguf
        # beside the HF files) is served by Fulcrum's llama.cpp engine: its checkpoints carry the adapter as GGUF too,
        # written against that file (read first: a file whose adapters cannot be written is refused before converting).
        gguf_path = model_path is not None and gguf_base.is_gguf_file(model_path)
        gguf_file = None
        if gguf_path:
            gguf_file = Path(model_path)
        elif model_path is not None and Path(model_path, "model.gguf").exists():
            gguf_file = Path(model_path, "model.gguf")
        self.gguf = read_base(gguf_file) if gguf_file is not None else None
        self.source = str(gguf_base.hf_directory(model_path, gguf_cache)) if gguf_path else model_path or model_id
        self.device = device()
        self.dtype = dtype_for(self.device)
        self.tokenizer = AutoTokenizer.from_pretrained(self.source)
        self.model = AutoModelForCausalLM.from_pretrained(self.source, dtype=self.dtype)
        if not on_cpu:
            self.model = self.model.to(self.device)
        self.model.requires_grad_(False)

    def with_adapter(self, adapter_dir: str | Path | None, lora: LoraSettings, seed: int = 0):
        """A trainable PEFT model: the given adapter (a job continuing from a checkpoint) or a new one, whose random
        initial weights come from `seed`, so that the same job on the same data trains the same adapter."""
        from peft import PeftModel, get_peft_model

        torch.manual_seed(seed)
        if adapter_dir is not None:
            peft_model = PeftModel.from_pretrained(self.model, str(adapter_dir), is_trainable=True)
        else:
            peft_model = get_peft_model(self.model, lora.config())
        for name, parameter in peft_model.named_parameters():
            if "lora_" in name:
                parameter.data = parameter.data.float()  # adapter weights train in float32 (master weights)
        if adapter_dir is None:
            fresh = fresh_weights(lora_shapes(peft_model), seed)
            with torch.no_grad():
                for name, parameter in peft_model.named_parameters():
                    if parameter.requires_grad:
                        parameter.copy_(fresh[name])
        return peft_model

    def release(self, peft_model) -> None:
        """Takes the adapter's layers out of the base model again, so the next job starts from the clean base."""
        self.model = peft_model.unload()
        self.model.requires_grad_(False)


def lora_shapes(peft_model) -> dict[str, tuple[int, ...]]:
    """The trainable (LoRA) parameters' names and shapes, in order (a sharded parameter: its whole shape)."""
    return {name: tuple(p.shape) for name, p in peft_model.named_parameters() if p.requires_grad}


def fresh_weights(shapes: dict[str, tuple[int, ...]], seed: int) -> dict[str, torch.Tensor]:
    """A new adapter's float32 weights, from `seed` alone (not from how the model is laid out over processes): each A
    as PEFT initialises it (Kaiming-uniform with a = sqrt(5): uniform in +-1/sqrt(fan_in)), each B zero, so that the
    new adapter changes nothing yet."""
    generator = torch.Generator().manual_seed(seed)
    weights = {}
    for name, shape in shapes.items():
        if ".lora_A." in name:
            bound = 1.0 / shape[1] ** 0.5
            weights[name] = torch.empty(shape).uniform_(-bound, bound, generator=generator)
        else:
            weights[name] = torch.zeros(shape)
    return weights


def gguf_adapter(files: dict[str, bytes], base: GgufBase) -> bytes:
    """The adapter of `save_adapter`'s files as a GGUF LoRA adapter of the base model's GGUF (for llama.cpp)."""
    from .gguf_export import write_lora_gguf

    with tempfile.TemporaryDirectory(prefix="fulcrum-adapter-gguf-") as directory:
        for name, content in files.items():
            Path(directory, name).write_bytes(content)
        return write_lora_gguf(directory, base, Path(directory, "adapter_model.gguf")).read_bytes()


def save_adapter(peft_model, dtype: torch.dtype, adapter_name: str | None = None) -> dict[str, bytes]:
    """The adapter's files (`adapter_config.json`, `adapter_model.safetensors`), weights in the base model's dtype; of
    the named one of a model with several adapters (the same files as a model with that adapter alone)."""
    with tempfile.TemporaryDirectory(prefix="fulcrum-adapter-") as root:
        if adapter_name is None:
            peft_model.save_pretrained(root, safe_serialization=True)
            directory = root
        else:
            peft_model.save_pretrained(root, safe_serialization=True, selected_adapters=[adapter_name])
            directory = root if adapter_name == "default" else os.path.join(root, adapter_name)
        if dtype != torch.float32:
            from safetensors.torch import load_file, save_file

            path = os.path.join(directory, "adapter_model.safetensors")
            save_file({k: v.to(dtype) for k, v in load_file(path).items()}, path, metadata={"format": "pt"})
        return {name: Path(directory, name).read_bytes() for name in ADAPTER_FILES}
