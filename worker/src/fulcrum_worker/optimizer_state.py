"""A model's AdamW state (moments and step count) carried from one job to the next, as OpenPipe ART's backends keep it
across a run's steps: held in memory for the checkpoint this worker made last, and stored in that checkpoint beside the
adapter (`optimizer.pt`), so that another worker, or this one after a restart, continues it."""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from typing import Any

import torch

FILE = "optimizer.pt"
FORMAT = "fulcrum-worker adamw 1"
# AdamW's settings other than the learning rate: moments made under other ones are not continued.
HYPERPARAMETERS: dict[str, Any] = {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False}


class Unusable(Exception):
    """A stored state this job cannot continue; the message says why, and the job starts fresh."""


@dataclass(frozen=True)
class Found:
    """The state a job may continue, and where it came from (`memory` or `checkpoint`); or why there is none."""

    stored: dict[str, Any] | None
    origin: str | None = None
    missing: str | None = None

    @staticmethod
    def none(reason: str) -> Found:
        return Found(None, missing=reason)


def trainable(model) -> list[tuple[str, torch.nn.Parameter]]:
    return [(name, p) for name, p in model.named_parameters() if p.requires_grad]


def start(model, learning_rate: float, found: Found) -> tuple[torch.optim.AdamW, dict[str, Any]]:
    """The job's optimizer: with the found moments and step count when they fit the model's trainable parameters,
    fresh otherwise; the learning rate is always the job's own. Also answers what `training_started` says of it."""
    parameters = trainable(model)
    optimizer = torch.optim.AdamW([p for _, p in parameters], lr=learning_rate, **HYPERPARAMETERS)
    if found.stored is None:
        return optimizer, {"optimizer": "fresh", "optimizer_reason": found.missing}
    try:
        state = _loadable(found.stored, parameters)
    except Unusable as unusable:
        return optimizer, {"optimizer": "fresh", "optimizer_reason": str(unusable)}
    # torch's own loading casts the moments to each parameter's device and dtype; the groups are this optimizer's,
    # so the job's learning rate applies to the moments carried over
    optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})
    steps = max(int(s["step"]) for s in state.values())
    return optimizer, {"optimizer": "continued", "optimizer_step": steps, "optimizer_from": found.origin}


def _loadable(stored: dict[str, Any], parameters: list[tuple[str, torch.nn.Parameter]]) -> dict[int, dict[str, Any]]:
    """torch's per-index optimizer state from the stored per-name one, after checking that it fits."""
    if stored.get("format") != FORMAT:
        raise Unusable(f"{FILE} is of format {stored.get('format')!r}, not {FORMAT!r}")
    given = stored.get("hyperparameters")
    settings = {k: given.get(k) if isinstance(given, dict) else None for k in HYPERPARAMETERS}
    settings["betas"] = tuple(settings["betas"]) if isinstance(settings["betas"], list | tuple) else settings["betas"]
    if settings != HYPERPARAMETERS:
        raise Unusable(f"{FILE} was made with AdamW settings {settings}, not {HYPERPARAMETERS}")
    shapes = {name: list(p.shape) for name, p in parameters}
    theirs = stored.get("parameters")
    if not isinstance(theirs, dict) or theirs != shapes:
        theirs = theirs if isinstance(theirs, dict) else {}
        unmatched = sorted(set(theirs) ^ set(shapes))
        if unmatched:
            first = f"{unmatched[0]} only {'here' if unmatched[0] in shapes else 'there'}"
        else:
            name = next(n for n in shapes if theirs[n] != shapes[n])
            first = f"{name} is {theirs[name]} there, {shapes[name]} here"
        raise Unusable(f"{FILE} is for other trainable parameters ({len(theirs)} there, {len(shapes)} here; {first})")
    state = {}
    for index, (name, _) in enumerate(parameters):
        moments = stored["state"].get(name)
        if moments is None:
            continue  # a parameter that never had a gradient has no state yet, as in torch
        if not isinstance(moments, dict):
            raise Unusable(f"{FILE}: the state of {name} is not a dictionary")
        for key in ("exp_avg", "exp_avg_sq"):
            if not isinstance(moments.get(key), torch.Tensor) or list(moments[key].shape) != shapes[name]:
                raise Unusable(f"{FILE}: {key} of {name} is not a tensor of shape {shapes[name]}")
        step = moments.get("step")
        if not isinstance(step, torch.Tensor) or step.numel() != 1 or not float(step) >= 1:
            raise Unusable(f"{FILE}: the step count of {name} is not a number >= 1")
        state[index] = {"step": step.float(), "exp_avg": moments["exp_avg"], "exp_avg_sq": moments["exp_avg_sq"]}
    if not state:
        raise Unusable(f"{FILE} has no moments yet: the job that wrote it took no gradient step")
    return state


def state_of(model, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The optimizer's state by parameter name, with what makes it continuable: the form kept and written."""
    parameters = trainable(model)
    state = {}
    for name, parameter in parameters:
        moments = optimizer.state.get(parameter)
        if moments:
            state[name] = {key: moments[key] for key in ("step", "exp_avg", "exp_avg_sq")}
    return {
        "format": FORMAT,
        "hyperparameters": {**HYPERPARAMETERS, "betas": list(HYPERPARAMETERS["betas"])},
        "parameters": {name: list(p.shape) for name, p in parameters},
        "state": state,
    }


def write(state: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def read(content: bytes) -> dict[str, Any]:
    """A stored state read from its file: tensors, numbers and names only (`weights_only`: nothing is executed)."""
    try:
        state = torch.load(io.BytesIO(content), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        raise Unusable(f"{FILE} holds more than tensors, numbers and names, or is no torch file") from error
    except (RuntimeError, EOFError, ValueError) as error:
        first_line = (str(error).splitlines() or [""])[0][:200]
        raise Unusable(f"{FILE} cannot be read ({type(error).__name__}: {first_line})") from error
    if not isinstance(state, dict) or not isinstance(state.get("state"), dict):
        raise Unusable(f"{FILE} holds no optimizer state")
    return state


@dataclass(frozen=True)
class _Kept:
    model_id: str
    files: dict[str, str]
    state: dict[str, Any]


class Memory:
    """The state of the checkpoint this worker made last (so of the model it trained last), by the model and the files
    of that checkpoint: a job continues it only when it starts from exactly that checkpoint."""

    def __init__(self) -> None:
        self._kept: _Kept | None = None

    def keep(self, model_id: str, files: dict[str, str], state: dict[str, Any]) -> None:
        """Remembers `state` for the checkpoint of `files` (path to SHA-256) of the model."""
        self._kept = _Kept(model_id, dict(files), state)

    def holds(self, model_id: str, files: dict[str, str]) -> bool:
        """Whether `take` would answer the state of this checkpoint."""
        kept = self._kept
        return kept is not None and kept.model_id == model_id and kept.files == files

    def take(self, model_id: str, files: dict[str, str]) -> dict[str, Any] | None:
        """The state kept for this checkpoint, forgotten here: the job's optimizer changes its tensors in place, so a
        failed job leaves nothing stale behind (its next attempt reads the checkpoint's file)."""
        kept = self._kept
        if not self.holds(model_id, files):
            return None
        self._kept = None
        return kept.state
