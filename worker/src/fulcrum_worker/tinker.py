"""Tinker training clients held live by this worker (docs/tinker.md): a claimed model is a LoRA adapter on the loaded
base, with its AdamW state and accumulated gradients in memory; its operations come one at a time in `seq_id` order
(`next`), each answered with its result or failure, until the server says to release it."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import requests
import torch

from . import model as models
from . import optimizer_state, protocol
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


def claim(server: protocol.Server, worker_id: str, wait: int) -> TinkerClaim | None:
    response = server.http.post(
        f"{server.base_url}/api/v1/workers/{worker_id}/tinker-claim",
        params={"wait": wait},
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
    """The calls of one held model, with its model-scoped token."""

    def __init__(self, server: protocol.Server, claimed: TinkerClaim) -> None:
        self.server = server
        self.claim = claimed
        self.prefix = f"{server.base_url}/api/v1/workers/tinker-models/{claimed.model_id}"
        self.headers = {"Authorization": f"Bearer {claimed.token}"}
        self._lock = threading.Lock()

    def _post(self, path: str, timeout: float | None = None, **kwargs: Any) -> requests.Response:
        with self._lock:
            response = self.server.http.post(
                self.prefix + path, headers=self.headers, timeout=timeout or self.server.timeout, **kwargs
            )
        return protocol._check(response, 200)

    def next(self, wait: int = 20) -> dict[str, Any]:
        return self._post("/next", params={"wait": wait}, timeout=self.server.timeout + wait).json()

    def finish(
        self, request_id: str, result: dict[str, Any] | None = None, error: str | None = None, category="server"
    ):
        body = {"result": result} if error is None else {"error": error[:4000], "category": category}
        self._post(f"/results/{request_id}", json=body)

    def upload(self, request_id: str, path: str, content: bytes) -> None:
        with self._lock:
            response = self.server.http.put(
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
            response = self.server.http.get(
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


class Session:
    """One held model: the adapter, the optimizer and the gradients accumulated since the last step."""

    def __init__(self, base: models.BaseModel, lora: dict[str, Any]) -> None:
        self.base = base
        self.settings = lora_settings(lora, base)
        self.model = base.with_adapter(None, self.settings, int(lora.get("seed") or 0))
        self.parameters = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(self.parameters, lr=1e-4, betas=(0.9, 0.95), eps=1e-12, weight_decay=0.0)
        self.vocab = self.model.get_input_embeddings().weight.shape[0]

    def close(self) -> None:
        self.base.release(self.model)

    def forward(self, spec: dict[str, Any], backward: bool) -> dict[str, Any]:
        """A forward (and backward) pass over the datums, one at a time, the gradients added to the accumulated ones."""
        loss_fn = spec["loss_fn"]
        config = spec.get("loss_fn_config") or {}
        outputs, total, tokens, ratio, ratio_tokens, clipped = [], 0.0, 0, 0.0, 0.0, 0.0
        self.model.train(backward)
        for datum in spec["data"]:
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
            total += float(loss.detach().sum())
            tokens += len(ids)
            ratio += metrics.get("ratio", 0.0)
            ratio_tokens += metrics.get("ratio_tokens", 0.0)
            clipped += metrics.get("clipped", 0.0)
            outputs.append({"logprobs": _tensor_data(lp.detach()), "elementwise_loss": _tensor_data(loss.detach())})
        result_metrics = {"loss:sum": total, "ntokens:sum": float(tokens)}
        # over the positions that carry the loss (nonzero advantages: the sampled tokens), not the prompt's
        if loss_fn in ("importance_sampling", "ppo", "cispo", "dro"):
            result_metrics["ratio:mean"] = ratio / max(ratio_tokens, 1.0)
        if loss_fn in ("ppo", "cispo"):
            result_metrics["clip_fraction:mean"] = clipped / max(ratio_tokens, 1.0)
        return {"loss_fn_output_type": "ArrayRecord", "loss_fn_outputs": outputs, "metrics": result_metrics}

    def optim_step(self, adam: dict[str, Any]) -> dict[str, Any]:
        """AdamW with this step's parameters on the accumulated gradients, which are then cleared."""
        for group in self.optimizer.param_groups:
            group["lr"] = float(adam.get("learning_rate", 1e-4))
            group["betas"] = (float(adam.get("beta1", 0.9)), float(adam.get("beta2", 0.95)))
            group["eps"] = float(adam.get("eps", 1e-12))
            group["weight_decay"] = float(adam.get("weight_decay", 0.0))
        for p in self.parameters:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
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
        files = models.save_adapter(self.model, dtype or self.base.dtype)
        if self.base.gguf is not None:
            files["adapter_model.gguf"] = models.gguf_adapter(files, self.base.gguf)
        return files

    def state(self) -> dict[str, bytes]:
        """The training state (`save_weights`): the adapter in float32, the weights it trains, and AdamW's moments
        and step count (`optimizer.pt`)."""
        files = self.weights(torch.float32)
        parameters = optimizer_state.trainable(self.model)
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
        expected = set(get_peft_model_state_dict(self.model))
        if set(weights) != expected:
            raise UserError(
                f"the saved adapter has other weights than this model's ({len(weights)} there, {len(expected)} here)"
            )
        stored = optimizer_state.read(files[optimizer_state.FILE]) if with_optimizer else None
        parameters = optimizer_state.trainable(self.model)
        if stored is not None and (
            stored.get("format") != STATE_FORMAT
            or stored.get("parameters") != {name: list(p.shape) for name, p in parameters}
        ):
            raise UserError("optimizer.pt is not the AdamW state of this model's trainable weights")
        with torch.no_grad():
            set_peft_model_state_dict(self.model, {k: v.float() for k, v in weights.items()})
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


def hold(server: protocol.Server, claimed: TinkerClaim, base: models.BaseModel) -> str:
    """Holds a claimed model until the server says to release it (or its lease is lost); answers how it ended."""
    held = Held(server, claimed)
    session = None
    interval = max(claimed.lease_seconds / 3, 0.5)
    try:
        with protocol.Heartbeat(held, interval, f"tinker-{held.claim.model_id}"):
            try:
                session = Session(base, claimed.lora)
                setup_error = None
            except UserError as error:
                setup_error = str(error)
        while True:
            try:
                nxt = held.next(wait=min(20, max(1, claimed.lease_seconds // 3)))
            except protocol.LeaseLost as lost:
                log.warning("tinker model %s: lease lost (%s)", claimed.model_id, lost)
                return "lost"
            except (requests.RequestException, protocol.ProtocolError) as error:
                log.warning("tinker model %s: next failed (%s); trying again", claimed.model_id, error)
                continue
            if nxt.get("release"):
                held.release(nxt.get("reason") or "released")
                log.info("tinker model %s released (%s)", claimed.model_id, nxt.get("reason"))
                return "released"
            op = nxt.get("operation")
            if op is None:
                continue
            if setup_error is not None:
                held.finish(op["request_id"], error=setup_error, category="user")
                if op["kind"] == "create_model":
                    held.release(setup_error)
                    return "refused"
                continue
            try:
                with protocol.Heartbeat(held, interval, f"tinker-{held.claim.model_id}"):
                    if op["kind"] in ("save_weights_for_sampler", "save_weights"):
                        # the files first; the result then makes them the model's next checkpoint
                        files = session.state() if op["kind"] == "save_weights" else session.weights()
                        for path, content in files.items():
                            held.upload(op["request_id"], path, content)
                        result = {}
                    elif op["kind"] == "load_weights":
                        request = op["request"]
                        files = {f["path"]: held.download(op["request_id"], f["path"]) for f in request["files"]}
                        session.load(files, bool(request.get("optimizer")))
                        result = {"path": request["path"], "type": "load_weights"}
                    else:
                        result = session.run(op["kind"], op["request"], claimed.model_id)
            except UserError as error:
                held.finish(op["request_id"], error=str(error), category="user")
                continue
            except Exception as error:  # the model's state may be broken: fail this one, the worker goes on
                log.exception("tinker model %s: %s failed", claimed.model_id, op["kind"])
                held.finish(op["request_id"], error=f"fulcrum-worker: {type(error).__name__}: {error}")
                continue
            held.finish(op["request_id"], result=result)
    except protocol.LeaseLost as lost:
        log.warning("tinker model %s: lease lost (%s)", claimed.model_id, lost)
        return "lost"
    finally:
        if session is not None:
            session.close()
