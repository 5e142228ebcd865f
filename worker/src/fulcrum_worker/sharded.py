"""The base model sharded over the ranks with FSDP (version 2, `fully_shard`), for a base that does not fit one device.

FSDP cannot be taken off a model again, so the LoRA layers stay in the sharded model for the worker's life (rank and
alpha of `--lora-rank` and `--lora-alpha`, all linear layers) and each job sets their weights: a new adapter's from
its seed, or the checkpoint's, which must then be of that same shape. Sharded as PEFT's FSDP policy wraps a LoRA model
(`peft.utils.other.fsdp_auto_wrap_policy`): each LoRA layer (a leaf with trainable weights, float32) a unit of its own,
each decoder layer (`_no_split_modules`) one, the rest with the root. Saving gathers the whole adapter and optimizer
state (collectives: every rank calls them) onto rank 0's CPU, which writes the files."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.fsdp import fully_shard

from . import model as models
from . import optimizer_state

FULL = StateDictOptions(full_state_dict=True, strict=False)
GATHERED = StateDictOptions(full_state_dict=True, cpu_offload=True, ignore_frozen_params=True)


class ShardedBase(models.BaseModel):
    """A `BaseModel` whose weights are sharded over the process group, with its resident LoRA layers."""

    def __init__(self, model_id: str, model_path: str | None, gguf_cache: str | None, lora: models.LoraSettings):
        from peft import get_peft_model

        super().__init__(model_id, model_path, gguf_cache, on_cpu=True)
        self.lora = lora
        self.peft_model = get_peft_model(self.model, lora.config())
        for name, parameter in self.peft_model.named_parameters():
            if "lora_" in name:
                parameter.data = parameter.data.float()
        self.shapes = models.lora_shapes(self.peft_model)
        layers = set(getattr(self.model, "_no_split_modules", None) or [])
        for module in self.peft_model.modules():
            weight = getattr(module, "weight", None)
            leaf = not list(module.children())
            if leaf and isinstance(weight, torch.nn.Parameter) and weight.requires_grad:
                fully_shard(module)
        for module in self.peft_model.modules():
            if type(module).__name__ in layers:
                fully_shard(module)
        fully_shard(self.peft_model)

    def with_adapter(self, adapter_dir: str | Path | None, lora: models.LoraSettings, seed: int = 0):
        torch.manual_seed(seed)
        if adapter_dir is None:
            weights = models.fresh_weights(self.shapes, seed)
        else:
            weights = self._checkpoint_weights(Path(adapter_dir))
        # every rank holds the whole weights (from the same seed or file) and keeps its shard of each
        set_model_state_dict(self.peft_model, weights, options=FULL)
        return self.peft_model

    def _checkpoint_weights(self, directory: Path) -> dict[str, torch.Tensor]:
        config = json.loads((directory / "adapter_config.json").read_text())
        stored = {
            name.replace(".lora_A.weight", ".lora_A.default.weight").replace(
                ".lora_B.weight", ".lora_B.default.weight"
            ): tensor
            for name, tensor in load_file(str(directory / "adapter_model.safetensors")).items()
        }
        theirs = {name: tuple(t.shape) for name, t in stored.items()}
        if (config.get("r"), config.get("lora_alpha")) != (self.lora.rank, self.lora.alpha) or theirs != self.shapes:
            raise ValueError(
                f"this worker shards the model (--shard) with LoRA layers of rank {self.lora.rank} and alpha "
                f"{self.lora.alpha} on all linear layers ({len(self.shapes)} weights); the checkpoint's adapter is of "
                f"rank {config.get('r')} and alpha {config.get('lora_alpha')} ({len(theirs)} weights): train it on "
                "workers with its --lora-rank and --lora-alpha"
            )
        return {name: tensor.float() for name, tensor in stored.items()}

    def release(self, peft_model) -> None:
        """Nothing to unwrap: the LoRA layers stay, the next job sets their weights; their gradients go."""
        for parameter in peft_model.parameters():
            parameter.grad = None


def start_optimizer(model, learning_rate: float, found: optimizer_state.Found) -> tuple[torch.optim.AdamW, dict]:
    """`optimizer_state.start` for a sharded model: every rank holds the same found state (rank 0 passed it on) and
    loads its shard of the moments."""
    parameters = optimizer_state.trainable(model)
    for _, parameter in parameters:
        parameter.grad = None  # torch's loading makes the moments with a step of zero gradients, only without any
    optimizer = torch.optim.AdamW([p for _, p in parameters], lr=learning_rate, **optimizer_state.HYPERPARAMETERS)
    if found.stored is None:
        return optimizer, {"optimizer": "fresh", "optimizer_reason": found.missing}
    try:
        by_index = optimizer_state._loadable(found.stored, parameters)
    except optimizer_state.Unusable as unusable:
        return optimizer, {"optimizer": "fresh", "optimizer_reason": str(unusable)}
    names = [name for name, _ in parameters]
    template = get_optimizer_state_dict(model, optimizer, options=FULL)
    state = {names[index]: moments for index, moments in by_index.items()}
    set_optimizer_state_dict(model, optimizer, {"state": state, "param_groups": template["param_groups"]}, options=FULL)
    for group in optimizer.param_groups:
        group["lr"] = learning_rate
    steps = max(int(s["step"]) for s in by_index.values())
    return optimizer, {"optimizer": "continued", "optimizer_step": steps, "optimizer_from": found.origin}


def gather(model, optimizer: torch.optim.Optimizer, dtype: torch.dtype) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The adapter's files and the optimizer's state by parameter name, gathered whole onto rank 0 (a collective:
    every rank calls it; the other ranks get nothing)."""
    weights = get_model_state_dict(model, options=GATHERED)
    moments = get_optimizer_state_dict(model, optimizer, options=GATHERED)
    if torch.distributed.get_rank() != 0:
        return {}, {}
    shapes = models.lora_shapes(model)
    tensors = {name.replace(".default.weight", ".weight"): weights[name].to(dtype).contiguous() for name in shapes}
    with tempfile.TemporaryDirectory(prefix="fulcrum-adapter-") as directory:
        config = copy.copy(model.peft_config["default"])
        config.inference_mode = True  # as PeftModel.save_pretrained writes it
        config.save_pretrained(directory)
        files = {"adapter_config.json": Path(directory, "adapter_config.json").read_bytes()}
    files["adapter_model.safetensors"] = save(tensors, metadata={"format": "pt"})
    state = {
        "format": optimizer_state.FORMAT,
        "hyperparameters": {**optimizer_state.HYPERPARAMETERS, "betas": list(optimizer_state.HYPERPARAMETERS["betas"])},
        "parameters": {name: list(shape) for name, shape in shapes.items()},
        "state": {
            name: {key: moments["state"][name][key] for key in ("step", "exp_avg", "exp_avg_sq")}
            for name in shapes
            if name in moments["state"]
        },
    }
    return files, state
