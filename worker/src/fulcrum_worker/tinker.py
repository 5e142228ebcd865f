"""Tinker training clients held live by this worker (docs/tinker.md): a claimed model is a LoRA adapter on the loaded
base, with its AdamW state and accumulated gradients in memory; its operations come one at a time in `seq_id` order
(`next`), each answered with its result or failure, until the server says to release it. A worker holds several at
once, each its own adapter on the one base (`Adapters`); `tinker_desk` serves them."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import requests
import torch

from . import distributed, optimizer_state, protocol
from . import model as models
from .tinker_losses import per_token_loss, target_logprobs

log = logging.getLogger("fulcrum_worker")

# Which modules each of the Tinker LoRA flags adapts (Llama-family names, as transformers names them).
ATTENTION = ["q_proj", "k_proj", "v_proj", "o_proj"]
MLP = ["gate_proj", "up_proj", "down_proj"]
ALPHA = 32  # Tinker's LoRA alpha (not on the wire)
# The training state's AdamW file: its moments and step count by parameter name (the hyperparameters are each step's).
STATE_FORMAT = "fulcrum-worker tinker adamw 1"


class UserError(ValueError):
    """The operation was wrong (not the worker): the future fails with category `user`."""


@dataclass(frozen=True)
class TinkerClaim:
    model_id: str
    base_model: str
    attempt: int
    token: str
    lease_seconds: int
    lora: dict[str, Any]


def claim(server: protocol.Server, worker_id: str, wait: int, max_models: int = 1) -> TinkerClaim | None:
    """A waiting model to hold, when the worker holds fewer than `max_models` (the server counts them); None when none
    came within `wait` seconds."""
    response = server.http.post(
        f"{server.base_url}/api/v1/workers/{worker_id}/tinker-claim",
        params={"wait": wait, "max_models": max_models},
        headers={"Authorization": f"Bearer {server.api_key}"},
        timeout=server.timeout + wait,
    )
    if protocol._check(response, 200, 204).status_code == 204:
        return None
    body = response.json()
    return TinkerClaim(
        body["model_id"], body["base_model"], body["attempt"], body["token"], body["lease_seconds"], body["lora"]
    )


class Held:
    """The calls of one held model, with its model-scoped token: `next` (a long poll, on a connection of its own) from
    the model's polling thread, the others one at a time from any thread."""

    def __init__(self, server: protocol.Server, claimed: TinkerClaim) -> None:
        self.server = server
        self.claim = claimed
        self.prefix = f"{server.base_url}/api/v1/workers/tinker-models/{claimed.model_id}"
        self.headers = {"Authorization": f"Bearer {claimed.token}"}
        self.http = requests.Session()
        self._polls = requests.Session()
        self._lock = threading.Lock()

    def _post(self, path: str, timeout: float | None = None, **kwargs: Any) -> requests.Response:
        with self._lock:
            response = self.http.post(
                self.prefix + path, headers=self.headers, timeout=timeout or self.server.timeout, **kwargs
            )
        return protocol._check(response, 200)

    def next(self, wait: int = 20) -> dict[str, Any]:
        response = self._polls.post(
            self.prefix + "/next", params={"wait": wait}, headers=self.headers, timeout=self.server.timeout + wait
        )
        return protocol._check(response, 200).json()

    def finish(
        self, request_id: str, result: dict[str, Any] | None = None, error: str | None = None, category="server"
    ):
        body = {"result": result} if error is None else {"error": error[:4000], "category": category}
        self._post(f"/results/{request_id}", json=body)

    def upload(self, request_id: str, path: str, content: bytes) -> None:
        with self._lock:
            response = self.http.put(
                f"{self.prefix}/results/{request_id}/files",
                params={"path": path},
                data=content,
                headers={**self.headers, "Content-Type": "application/octet-stream"},
                timeout=self.server.timeout,
            )
        protocol._check(response, 200)

    def download(self, request_id: str, path: str) -> bytes:
        """A file of the training state the running `load_weights` operation loads."""
        with self._lock:
            response = self.http.get(
                f"{self.prefix}/results/{request_id}/files",
                params={"path": path},
                headers=self.headers,
                timeout=self.server.timeout,
            )
        return protocol._check(response, 200).content

    def heartbeat(self) -> None:
        self._post("/heartbeat")

    def release(self, reason: str) -> None:
        self._post("/release", json={"reason": reason[:4000]})


def lora_settings(lora: dict[str, Any], base: models.BaseModel) -> models.LoraSettings:
    """PEFT settings of a Tinker LoRA config: rank, alpha 32, the modules its flags name. `train_unembed` on a base
    whose output layer is its embedding matrix (tied, as SmolLM2's) is refused: no adapter can be served there."""
    targets = (ATTENTION if lora.get("train_attn", True) else []) + (MLP if lora.get("train_mlp", True) else [])
    if lora.get("train_unembed", True):
        if getattr(base.model.config, "tie_word_embeddings", False):
            raise UserError(
                f"{base.source}'s output layer is tied to its embeddings: an adapter of it cannot be served; "
                "create the training client with train_unembed=False"
            )
        targets.append("lm_head")
    return models.LoraSettings(rank=int(lora["rank"]), alpha=ALPHA, target_modules=targets)


def _tensor(data: dict[str, Any], dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(data["data"], dtype=dtype)


def _tensor_data(values: torch.Tensor) -> dict[str, Any]:
    return {"data": [float(v) for v in values.tolist()], "dtype": "float32", "shape": [int(values.shape[0])]}


class Adapters:
    """The held models' adapters on the worker's one base: one PEFT model with a named LoRA adapter per held model
    (its own weights; only the active one takes part in a forward, and only its weights train). The base's weights are
    shared and never trained; the last adapter removed leaves the clean base for jobs."""

    def __init__(self, base: models.BaseModel) -> None:
        self.base = base
        self.peft = None
        self._count = 0

    def add(self, settings: models.LoraSettings, seed: int) -> str:
        """A new adapter, its weights from `seed` alone (the same adapter as a model held alone would get); answers its
        name."""
        from peft import get_peft_model

        self._count += 1
        name = f"tinker{self._count}"
        torch.manual_seed(seed)
        if self.peft is None:
            self.peft = get_peft_model(self.base.model, settings.config(), adapter_name=name)
        else:
            self.peft.add_adapter(name, settings.config())
        try:
            self.activate(name)
            parameters = self.parameters(name)
            for _, parameter in parameters:
                parameter.data = parameter.data.float()  # adapter weights train in float32 (master weights)
            fresh = models.fresh_weights({n: tuple(p.shape) for n, p in parameters}, seed)
            with torch.no_grad():
                for n, parameter in parameters:
                    parameter.copy_(fresh[n])
        except BaseException:
            self.remove(name)
            raise
        return name

    def activate(self, name: str) -> None:
        """The adapter the next forward uses (and the only one whose weights require gradients)."""
        if self.peft.active_adapter != name:
            self.peft.set_adapter(name)

    def parameters(self, name: str) -> list[tuple[str, torch.nn.Parameter]]:
        """An adapter's weights in module order, named as a model with this one adapter names them (PEFT's `default`
        adapter: the names of saved optimizer states)."""
        marker = f".{name}."
        return [(n.replace(marker, ".default."), p) for n, p in self.peft.named_parameters() if marker in n]

    def remove(self, name: str) -> None:
        if self.peft is None or name not in self.peft.peft_config:
            return
        if len(self.peft.peft_config) == 1:
            self.base.model = self.peft.unload()
            self.base.model.requires_grad_(False)
            self.peft = None
        else:
            if self.peft.active_adapter == name:
                self.activate(next(n for n in self.peft.peft_config if n != name))
            self.peft.delete_adapter(name)

    def __len__(self) -> int:
        return 0 if self.peft is None else len(self.peft.peft_config)


class Session:
    """One held model: its adapter, the optimizer and the gradients accumulated since the last step. In a process group
    (`group`, DDP) every rank holds the same adapter; a forward's datums are shared out over the ranks, each keeping the
    gradients of its own, summed over the ranks by `optim_step`."""

    def __init__(self, adapters: Adapters, lora: dict[str, Any], group: distributed.Group | None = None) -> None:
        self.adapters = adapters
        self.base = adapters.base
        self.group = group or distributed.Group()
        self.settings = lora_settings(lora, self.base)
        self.name = adapters.add(self.settings, int(lora.get("seed") or 0))
        self.parameters = [p for _, p in adapters.parameters(self.name)]
        self.optimizer = torch.optim.AdamW(self.parameters, lr=1e-4, betas=(0.9, 0.95), eps=1e-12, weight_decay=0.0)
        self.vocab = self.model.get_input_embeddings().weight.shape[0]

    def close(self) -> None:
        self.adapters.remove(self.name)

    @property
    def model(self):
        return self.adapters.peft

    def _active(self) -> None:
        self.adapters.activate(self.name)

    def _datum(self, datum: dict[str, Any], loss_fn: str, config: dict[str, Any], backward: bool) -> tuple:
        ids = [t for chunk in datum["model_input"]["chunks"] for t in chunk["tokens"]]
        inputs = datum.get("loss_fn_inputs") or {}
        targets = _tensor(inputs["target_tokens"], torch.long)
        if max(ids + targets.tolist()) >= self.vocab:
            raise UserError(f"a token id is not below the vocabulary size {self.vocab}")
        tensors = {k: _tensor(v, torch.float32) for k, v in inputs.items() if k != "target_tokens"}
        with torch.set_grad_enabled(backward):
            logits = self.model(input_ids=torch.tensor([ids], device=self.base.device)).logits[0]
            lp = target_logprobs(logits, targets.to(logits.device)).cpu()
            try:
                loss, metrics = per_token_loss(loss_fn, lp, tensors, config)
            except ValueError as error:
                raise UserError(str(error)) from error
            if backward:
                loss.sum().backward()
        output = {"logprobs": _tensor_data(lp.detach()), "elementwise_loss": _tensor_data(loss.detach())}
        return (
            output,
            float(loss.detach().sum()),
            len(ids),
            metrics.get("ratio", 0.0),
            metrics.get("ratio_tokens", 0.0),
            metrics.get("clipped", 0.0),
        )

    def forward(self, spec: dict[str, Any], backward: bool) -> dict[str, Any] | None:
        """A forward (and backward) pass over the datums, one at a time. A forward_backward's gradients are added to the
        accumulated ones only once every datum went through (on every rank): a failed one changes nothing. In a group,
        each rank runs its share of the datums; rank 0 answers the result of all of them (the other ranks None)."""
        loss_fn = spec["loss_fn"]
        config = spec.get("loss_fn_config") or {}
        data = spec["data"]
        self._active()
        self.model.train(backward)
        accumulated = [p.grad for p in self.parameters]
        for p in self.parameters:
            p.grad = None
        mine, error = [], None
        try:
            for index in distributed.share(len(data), self.group):
                mine.append((index, *self._datum(data[index], loss_fn, config, backward)))
        except Exception as failure:
            error = failure
        try:
            _agree(self.group, error)
        except BaseException:
            for p, grad in zip(self.parameters, accumulated, strict=True):
                p.grad = grad
            raise
        for p, grad in zip(self.parameters, accumulated, strict=True):
            if grad is not None:
                p.grad = grad if p.grad is None else grad + p.grad
        pieces = self.group.gather(mine)
        if not self.group.main:
            return None
        outputs, total, tokens, ratio, ratio_tokens, clipped = [], 0.0, 0, 0.0, 0.0, 0.0
        for _, output, loss_sum, count, ratio_sum, ratio_count, clipped_sum in sorted(
            (item for piece in pieces for item in piece), key=lambda item: item[0]
        ):
            outputs.append(output)
            total += loss_sum
            tokens += count
            ratio += ratio_sum
            ratio_tokens += ratio_count
            clipped += clipped_sum
        result_metrics = {"loss:sum": total, "ntokens:sum": float(tokens)}
        # over the positions that carry the loss (nonzero advantages: the sampled tokens), not the prompt's
        if loss_fn in ("importance_sampling", "ppo", "cispo", "dro"):
            result_metrics["ratio:mean"] = ratio / max(ratio_tokens, 1.0)
        if loss_fn in ("ppo", "cispo"):
            result_metrics["clip_fraction:mean"] = clipped / max(ratio_tokens, 1.0)
        return {"loss_fn_output_type": "ArrayRecord", "loss_fn_outputs": outputs, "metrics": result_metrics}

    def optim_step(self, adam: dict[str, Any]) -> dict[str, Any]:
        """AdamW with this step's parameters on the accumulated gradients (in a group: summed over the ranks first, so
        every rank takes the same step), which are then cleared."""
        self._active()
        for group in self.optimizer.param_groups:
            group["lr"] = float(adam.get("learning_rate", 1e-4))
            group["betas"] = (float(adam.get("beta1", 0.9)), float(adam.get("beta2", 0.95)))
            group["eps"] = float(adam.get("eps", 1e-12))
            group["weight_decay"] = float(adam.get("weight_decay", 0.0))
        for p in self.parameters:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        if self.group.distributed:
            flat = self.group.sum(torch.cat([p.grad.reshape(-1) for p in self.parameters]))
            offset = 0
            for p in self.parameters:
                p.grad = flat[offset : offset + p.numel()].view_as(p).clone()
                offset += p.numel()
        clip = float(adam.get("grad_clip_norm", 0.0))
        norm = torch.nn.utils.clip_grad_norm_(self.parameters, clip if clip > 0 else float("inf"))
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        step = max(int(s["step"]) for s in self.optimizer.state.values()) if self.optimizer.state else 0
        return {
            "metrics": {
                "grad_norm": float(norm),
                "learning_rate": float(adam.get("learning_rate", 1e-4)),
                "step": float(step),
            }
        }

    def weights(self, dtype: torch.dtype | None = None) -> dict[str, bytes]:
        """The adapter's files as a checkpoint serves them: the PEFT files (in `dtype`, by default the base model's),
        and the GGUF adapter of a GGUF base."""
        files = models.save_adapter(self.model, dtype or self.base.dtype, self.name)
        if self.base.gguf is not None:
            files["adapter_model.gguf"] = models.gguf_adapter(files, self.base.gguf)
        return files

    def state(self) -> dict[str, bytes]:
        """The training state (`save_weights`): the adapter in float32, the weights it trains, and AdamW's moments
        and step count (`optimizer.pt`)."""
        files = self.weights(torch.float32)
        parameters = self.adapters.parameters(self.name)
        moments = {}
        for name, parameter in parameters:
            kept = self.optimizer.state.get(parameter)
            if kept:
                moments[name] = {key: kept[key] for key in ("step", "exp_avg", "exp_avg_sq")}
        files[optimizer_state.FILE] = optimizer_state.write(
            {
                "format": STATE_FORMAT,
                "parameters": {name: list(p.shape) for name, p in parameters},
                "state": moments,
            }
        )
        return files

    def load(self, files: dict[str, bytes], with_optimizer: bool) -> dict[str, Any]:
        """Loads a training state (`load_weights`): the adapter's weights, and AdamW's state when asked (a fresh
        AdamW otherwise); the accumulated gradients are cleared."""
        from peft import get_peft_model_state_dict, set_peft_model_state_dict
        from safetensors.torch import load as load_safetensors

        if "adapter_model.safetensors" not in files or optimizer_state.FILE not in files:
            raise UserError("the checkpoint holds no training state (adapter_model.safetensors and optimizer.pt)")
        weights = load_safetensors(files["adapter_model.safetensors"])
        expected = set(get_peft_model_state_dict(self.model, adapter_name=self.name))
        if set(weights) != expected:
            raise UserError(
                f"the saved adapter has other weights than this model's ({len(weights)} there, {len(expected)} here)"
            )
        stored = optimizer_state.read(files[optimizer_state.FILE]) if with_optimizer else None
        parameters = self.adapters.parameters(self.name)
        if stored is not None and (
            stored.get("format") != STATE_FORMAT
            or stored.get("parameters") != {name: list(p.shape) for name, p in parameters}
        ):
            raise UserError("optimizer.pt is not the AdamW state of this model's trainable weights")
        with torch.no_grad():
            set_peft_model_state_dict(self.model, {k: v.float() for k, v in weights.items()}, adapter_name=self.name)
        self.optimizer = torch.optim.AdamW(self.parameters, lr=1e-4, betas=(0.9, 0.95), eps=1e-12, weight_decay=0.0)
        for p in self.parameters:
            p.grad = None
        if stored is not None:
            state = {}
            for index, (name, _) in enumerate(parameters):
                moments = stored["state"].get(name)
                if moments is not None:
                    state[index] = {key: moments[key] for key in ("step", "exp_avg", "exp_avg_sq")}
            groups = self.optimizer.state_dict()["param_groups"]
            self.optimizer.load_state_dict({"state": state, "param_groups": groups})
        return {"optimizer": stored is not None}

    def run(self, kind: str, request: dict[str, Any], model_id: str) -> dict[str, Any]:
        if kind == "create_model":
            return {"model_id": model_id, "type": "create_model"}
        if kind == "forward":
            return self.forward(request["forward_input"], backward=False)
        if kind == "forward_backward":
            return self.forward(request["forward_backward_input"], backward=True)
        if kind == "optim_step":
            return self.optim_step(request["adam_params"])
        raise UserError(f"operation {kind} is not served by this worker")


def _agree(group: distributed.Group, error: BaseException | None) -> None:
    """Every rank's outcome of a step they all ran: an error on any rank raises on every rank (rank 0 raises its own,
    or another rank's as `RankFailed`, a user's error staying one; the other ranks raise `distributed.Stopped`)."""
    try:
        group.agree(error)
    except distributed.RankFailed as failed:
        if failed.kind == UserError.__name__:
            raise UserError(str(failed)) from failed
        raise
