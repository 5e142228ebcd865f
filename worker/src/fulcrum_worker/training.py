"""The training loops: SFT and RL over token sequences, one `gradient_step` report per optimizer step."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from . import data, losses

# The ART config keys this worker honours. Any other key a job sets is named in its training_started event
# (`not_implemented`), so the client sees which settings it ran without.
IMPLEMENTED_KEYS = {
    "learning_rate",
    "batch_size",
    "epochs",
    "assistant_turns",
    "loss_fn",
    "epsilon",
    "epsilon_high",
    "importance_sampling_level",
    "scale_rewards",
    "allow_training_without_logprobs",
    "max_grad_norm",
    "seed",
    "advantage_balance",
    "beta",
    "precalculate_logprobs",
    "normalize_advantages",
}


class Cancelled(Exception):
    """A cancel was requested: the job stops before its next step, without a checkpoint."""


# report(type, data) posts an event and answers whether a cancel was requested.
Report = Callable[[str, dict[str, Any]], bool]


@dataclass
class Settings:
    learning_rate: float | list[float] = 1e-4
    batch_size: int = 8
    epochs: int = 1
    assistant_turns: str = "all"
    loss_fn: str = "cispo"
    epsilon: float | None = None
    epsilon_high: float | None = None
    importance_sampling_level: str = "token"
    scale_rewards: bool = True
    allow_training_without_logprobs: bool = True
    max_grad_norm: float = 1.0
    seed: int = 0
    advantage_balance: float = 0.0
    beta: float = 0.0
    precalculate_logprobs: bool = False
    normalize_advantages: bool = False

    @staticmethod
    def of(config: dict[str, Any] | None, kind: str) -> tuple[Settings, list[str]]:
        """The settings of a job's config, and the keys given that this worker does not implement."""
        config = dict(config or {})
        # SFT defaults to 3 passes, unless the learning rate is a list with one rate per batch: that is ART's
        # schedule, which has repeated the data for its own epochs already (one pass over what it sends)
        per_batch = isinstance(config.get("learning_rate"), list)
        settings = Settings(epochs=1 if kind == "rl" or per_batch else 3)
        for key in IMPLEMENTED_KEYS:
            if config.get(key) is not None:
                setattr(settings, key, config[key])
        ignored = sorted(k for k, v in config.items() if k not in IMPLEMENTED_KEYS and v is not None)
        return settings, ignored

    def rate(self, step: int) -> float:
        """The learning rate of a step (0-based): a number, or a list with one value per step (the last one holds)."""
        if isinstance(self.learning_rate, list):
            return float(self.learning_rate[min(step, len(self.learning_rate) - 1)])
        return float(self.learning_rate)


def batches(count: int, batch_size: int, epochs: int, seed: int) -> list[list[int]]:
    """The indexes of each step's batch: every epoch visits every item once, in an order fixed by the seed."""
    rng = random.Random(seed)
    steps = []
    for _ in range(epochs):
        order = list(range(count))
        rng.shuffle(order)
        steps += [order[i : i + batch_size] for i in range(0, count, batch_size)]
    return steps


def pad(sequences: list[data.Sequence], pad_id: int, dev: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded inputs, targets (the next token), the target mask and behaviour logprobs of a batch."""
    width = max(len(s.ids) for s in sequences) - 1
    inputs = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    targets = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.bool)
    attention = torch.zeros((len(sequences), width), dtype=torch.long)
    old = torch.full((len(sequences), width), math.nan)
    for row, s in enumerate(sequences):
        n = len(s.ids) - 1
        inputs[row, :n] = torch.tensor(s.ids[:-1])
        targets[row, :n] = torch.tensor(s.ids[1:])
        mask[row, :n] = torch.tensor(s.mask[1:])
        attention[row, :n] = 1
        if s.logprobs:
            old[row, :n] = torch.tensor(s.logprobs[1:], dtype=torch.float32)
    return {
        "inputs": inputs.to(dev),
        "targets": targets.to(dev),
        "mask": mask.to(dev),
        "attention": attention.to(dev),
        "old": old.to(dev),
    }


def _logits(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    return model(input_ids=batch["inputs"], attention_mask=batch["attention"]).logits


def _step_metrics(model, optimizer, loss, settings, step, mask, start) -> dict[str, float]:
    """Takes the optimizer step for this loss and answers what every gradient_step event reports of it."""
    rate = settings.rate(step)
    grad_norm = _step(model, optimizer, loss, settings, rate)
    return {
        "loss": float(loss.detach()),
        "grad_norm": grad_norm,
        "learning_rate": rate,
        "num_trainable_tokens": float(mask.sum()),
        "step_time": time.perf_counter() - start,
    }


def _step(model, optimizer, loss: torch.Tensor, settings: Settings, rate: float) -> float:
    for group in optimizer.param_groups:
        group["lr"] = rate
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    parameters = [p for p in model.parameters() if p.requires_grad]
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, settings.max_grad_norm)
    optimizer.step()
    return float(grad_norm)


def train_sft(
    model,
    tokenizer,
    examples: list[dict[str, Any]],
    settings: Settings,
    optimizer: torch.optim.Optimizer,
    report: Report,
    started: dict[str, Any],
) -> dict[str, float]:
    sequences = [data.sft_sequence(tokenizer, e, settings.assistant_turns) for e in examples]
    sequences = [s for s in sequences if s.trainable_tokens > 0]
    if not sequences:
        raise ValueError("no example has an assistant turn to train")
    steps = batches(len(sequences), settings.batch_size, settings.epochs, settings.seed)
    report("training_started", {"num_sequences": len(steps), **started})
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    metrics: dict[str, float] = {}
    model.train()
    for step, indexes in enumerate(steps):
        start = time.perf_counter()
        batch = pad([sequences[i] for i in indexes], pad_id, model.device)
        loss = losses.sft_loss(_logits(model, batch), batch["targets"], batch["mask"])
        metrics = {
            **_step_metrics(model, optimizer, loss, settings, step, batch["mask"], start),
            "num_sequences": float(len(indexes)),
        }
        if report("gradient_step", metrics):
            raise Cancelled()
    return metrics


def _rl_sequences(tokenizer, groups: list[dict[str, Any]], settings: Settings):
    rewards_all: list[float] = []
    scored: list[tuple[dict[str, Any], float]] = []
    for group in groups:
        trajectories = group["trajectories"]
        rewards = [float(t["reward"]) for t in trajectories]
        rewards_all += rewards
        scored += zip(trajectories, losses.group_advantages(rewards, settings.scale_rewards), strict=True)
    advantages = [a for _, a in scored]
    if settings.normalize_advantages:
        advantages = losses.normalize_advantages(advantages)
    sequences: list[data.Sequence] = []
    for (trajectory, _), advantage in zip(scored, advantages, strict=True):
        advantage = losses.balance_advantage(advantage, settings.advantage_balance)
        if advantage == 0:
            continue  # contributes no gradient
        sequence = data.trajectory_sequence(
            tokenizer, trajectory, require_logprobs=not settings.allow_training_without_logprobs
        )
        if sequence.trainable_tokens:
            sequence.advantage = advantage
            sequences.append(sequence)
    return rewards_all, sequences


def train_rl(
    model,
    tokenizer,
    groups: list[dict[str, Any]],
    settings: Settings,
    optimizer: torch.optim.Optimizer,
    report: Report,
    started: dict[str, Any],
) -> dict[str, float]:
    rewards, sequences = _rl_sequences(tokenizer, groups, settings)
    mean = sum(rewards) / len(rewards)
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    steps = batches(len(sequences), settings.batch_size, settings.epochs, settings.seed)
    if settings.beta > 0 and not hasattr(model, "disable_adapter"):
        raise ValueError("beta needs the base model as its reference: the model trains no adapter")
    if settings.precalculate_logprobs:
        # the behaviour policy is the weights this job starts from, whatever the trajectories carry
        for s in sequences:
            s.logprobs = [s.logprobs[0]] + [math.nan] * (len(s.logprobs) - 1)
    sampled = sum(1 for s in sequences if any(not math.isnan(v) for v in s.logprobs))
    report(
        "training_started",
        {
            "num_sequences": len(steps),
            "behaviour_logprobs_from_trajectories": sampled,
            "behaviour_logprobs_recomputed": len(sequences) - sampled,
            **started,
        },
    )
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    # The behaviour policy where a trajectory carried no logprobs: the weights this job starts from.
    model.eval()
    with torch.no_grad():
        for s in sequences:
            if any(math.isnan(v) for v in s.logprobs):
                batch = pad([s], pad_id, model.device)
                current = losses.token_logprobs(_logits(model, batch), batch["targets"])[0].tolist()
                s.logprobs = [s.logprobs[0]] + [
                    c if math.isnan(v) else v for v, c in zip(s.logprobs[1:], current, strict=True)
                ]
    model.train()
    metrics: dict[str, float] = {
        "loss": 0.0,
        "reward": mean,
        "reward_std_dev": std,
        "num_trajectories": float(len(rewards)),
        "num_groups": float(len(groups)),
    }
    for step, indexes in enumerate(steps):
        start = time.perf_counter()
        chosen = [sequences[i] for i in indexes]
        batch = pad(chosen, pad_id, model.device)
        new = losses.token_logprobs(_logits(model, batch), batch["targets"])
        old = torch.where(torch.isnan(batch["old"]), new.detach(), batch["old"])
        advantages = torch.tensor([s.advantage for s in chosen], device=model.device)
        loss, policy = losses.policy_loss(
            new,
            old,
            advantages,
            batch["mask"],
            loss_fn=settings.loss_fn,
            epsilon=settings.epsilon,
            epsilon_high=settings.epsilon_high,
            importance_sampling_level=settings.importance_sampling_level,
        )
        penalty = {}
        if settings.beta > 0:
            with torch.no_grad(), model.disable_adapter():
                reference = losses.token_logprobs(_logits(model, batch), batch["targets"])
            kl = losses.kl_penalty(new, reference, batch["mask"])
            loss = loss + settings.beta * kl
            penalty["kl_div"] = float(kl.detach())
        metrics = {
            **metrics,
            **_step_metrics(model, optimizer, loss, settings, step, batch["mask"], start),
            "ratio_mean": policy["ratio_mean"],
            "clip_fraction": policy["clip_fraction"],
            **penalty,
        }
        if report("gradient_step", metrics):
            raise Cancelled()
    return metrics
