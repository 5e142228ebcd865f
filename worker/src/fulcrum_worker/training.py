"""The training loops: SFT and RL over token sequences, one `gradient_step` report per optimizer step."""

from __future__ import annotations

import contextlib
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from . import data, distributed, losses

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


# loss_of(batch, sequences, tokens): the loss of a part of a step (the batch of `sequences`, padded) with the step's
# trained tokens over all ranks as its denominator, and metrics that add up over the parts as the loss does.
LossOf = Callable[[dict[str, torch.Tensor], list[data.Sequence], float], tuple[torch.Tensor, dict[str, float]]]


def trained_tokens(sequences: list[data.Sequence]) -> int:
    """The tokens a batch of these sequences trains (the first token of a sequence is never a target)."""
    return sum(sum(s.mask[1:]) for s in sequences)


def parts(count: int, group: distributed.Group, micro_batch: int | None) -> list[list[int]]:
    """This rank's positions in a step's batch of `count` sequences, cut into micro-batches of at most `micro_batch`
    (default: the rank's whole share). Every rank gets as many parts as the rank with the most (an empty one trains
    nothing: in FSDP every forward and backward is a collective, so every rank runs each one)."""
    mine = distributed.share(count, group)
    largest = -(-count // group.world_size)
    size = max(1, micro_batch or largest)
    rounds = max(1, -(-largest // size))
    return [mine[r * size : (r + 1) * size] for r in range(rounds)]


def _train_step(
    model,
    optimizer: torch.optim.Optimizer,
    settings: Settings,
    step: int,
    chosen: list[data.Sequence],
    loss_of: LossOf,
    pad_id: int,
    group: distributed.Group,
    micro_batch: int | None,
) -> dict[str, float]:
    """One optimizer step on the batch `chosen`, over every rank of the group; answers the gradient_step metrics.

    Each rank trains its share of the batch (`parts`), each part's loss divided by the trained tokens of the whole
    batch, so that the parts' gradients add up to the one-process gradient of the batch: they are summed over the
    micro-batches (accumulated in .grad), then over the ranks (one all-reduce of all gradients and the metrics' parts,
    after the last micro-batch: what DistributedDataParallel's `no_sync` on inner steps gives, without its
    all-reduce inside backward, which a rank that fails mid-step would leave the others waiting in). In FSDP, FSDP
    reduce-scatters the gradients itself (only after the last micro-batch), averaged over the ranks: the loss is
    multiplied by the world size to make that average the sum. Gradients are clipped after their reduction, so by the
    norm of the whole batch's gradient, the same on every rank."""
    start = time.perf_counter()
    rate = settings.rate(step)
    for param_group in optimizer.param_groups:
        param_group["lr"] = rate
    tokens = float(trained_tokens(chosen))
    parameters = [p for p in model.parameters() if p.requires_grad]
    sums: dict[str, float] = {}
    own_tokens = 0

    def forward_backward() -> None:
        nonlocal own_tokens
        optimizer.zero_grad(set_to_none=True)
        rounds = parts(len(chosen), group, micro_batch)
        for r, positions in enumerate(rounds):
            sequences = [chosen[i] for i in positions] or chosen[:1]
            batch = pad(sequences, pad_id, group.device())
            if not positions:
                batch["mask"].zero_()  # a part without sequences: a forward and backward that train nothing
            own_tokens += sum(len(s.ids) - 1 for s in sequences) if positions else 0
            with _gradient_sync(model, group, r == len(rounds) - 1):
                loss, metrics = loss_of(batch, sequences, tokens)
                (loss * group.world_size if group.mode == "fsdp" else loss).backward()
            for key, value in {"loss": float(loss.detach()), **metrics}.items():
                sums[key] = sums.get(key, 0.0) + value

    if group.mode == "fsdp":
        try:
            forward_backward()  # collectives inside: a rank failing here cannot tell the others; the group breaks
        except distributed.GroupBroken:
            raise
        except Exception as error:
            raise distributed.GroupBroken(f"rank {group.rank} failed inside an FSDP step: {error}") from error
        reduced = group.sum(torch.tensor(list(sums.values()), dtype=torch.float64, device=group.device()))
    else:
        with group.agreement():
            forward_backward()
        reduced = _sum_gradients(parameters, list(sums.values()), group)
    metrics = dict(zip(sums, reduced.tolist(), strict=True))
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, settings.max_grad_norm)
    optimizer.step()
    elapsed = time.perf_counter() - start
    processed = sum(len(s.ids) - 1 for s in chosen)
    return {
        **metrics,
        "grad_norm": float(grad_norm.full_tensor() if hasattr(grad_norm, "full_tensor") else grad_norm),
        "learning_rate": rate,
        "num_trainable_tokens": tokens,
        "step_time": elapsed,
        "world_size": float(group.world_size),
        # every token of the step's sequences (context included), per second: of the group, and of this rank alone
        "tokens_per_second": processed / elapsed,
        "tokens_per_second_per_rank": own_tokens / elapsed,
    }


def _gradient_sync(model, group: distributed.Group, last: bool):
    """FSDP reduce-scatters the gradients after the last micro-batch only; elsewhere nothing to do here."""
    if group.mode == "fsdp":
        model.set_requires_gradient_sync(last)
    return contextlib.nullcontext()


def _sum_gradients(parameters: list[torch.nn.Parameter], values: list[float], group: distributed.Group) -> torch.Tensor:
    """Sums every rank's gradients (in place) and `values`, in one all-reduce; answers the summed values."""
    if not group.distributed:
        return torch.tensor(values, dtype=torch.float64)
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
    extra = torch.tensor(values, dtype=grads[0].dtype, device=grads[0].device)
    flat = group.sum(torch.cat([g.reshape(-1) for g in grads] + [extra]))
    offset = 0
    for parameter, grad in zip(parameters, grads, strict=True):
        parameter.grad = flat[offset : offset + grad.numel()].view_as(grad)
        offset += grad.numel()
    return flat[offset:].double().cpu()


def _end_step(model, report: Report, metrics: dict[str, float], step: int, group: distributed.Group) -> None:
    """Rank 0 reports the step; every rank then learns, at the same step, whether to go on: a cancel, a lost lease
    or rank 0's failure stops all. In DDP the ranks also compare a fingerprint of their weights, which must be equal
    (a failure otherwise: one process's update must be every rank's)."""
    code, error = 0.0, None
    if group.main:
        try:
            code = 1.0 if report("gradient_step", metrics) else 0.0
        except Exception as failure:  # a lost lease, a protocol error: rank 0 raises it, the others stop
            code, error = 2.0, failure
    if not group.distributed:
        if error is not None:
            raise error
        if code:
            raise Cancelled()
        return
    fingerprint = _fingerprint(model) if group.mode == "ddp" else 0.0
    agreed = group.maximum(torch.tensor([code, fingerprint, -fingerprint], dtype=torch.float64, device=group.device()))
    code = float(agreed[0])
    if code == 2.0:
        raise error if error is not None else distributed.Stopped()
    if code == 1.0:
        raise Cancelled() if group.main else distributed.Stopped()
    if float(agreed[1]) != -float(agreed[2]):
        if not group.main:
            raise distributed.Stopped()
        raise RuntimeError(f"the ranks' adapter weights differ after step {step + 1}: the group is out of step")


def _fingerprint(model) -> float:
    """A number that differs between two ranks whose trainable weights differ (in practice)."""
    total = torch.zeros((), dtype=torch.float64)
    for p in model.parameters():
        if p.requires_grad:
            weights = p.detach().double()
            total += (weights.sum() + weights.square().sum()).cpu()
    return float(total)


def _started(report: Report, data_: dict[str, Any], group: distributed.Group) -> None:
    """Rank 0 reports training_started; a failure there stops every rank."""
    with group.agreement():
        if group.main:
            report("training_started", {"mode": group.mode, "world_size": group.world_size, **data_})


def train_sft(
    model,
    tokenizer,
    examples: list[dict[str, Any]],
    settings: Settings,
    optimizer: torch.optim.Optimizer,
    report: Report,
    started: dict[str, Any],
    group: distributed.Group | None = None,
    micro_batch: int | None = None,
) -> dict[str, float]:
    group = group or distributed.Group()
    with group.agreement():
        sequences = [data.sft_sequence(tokenizer, e, settings.assistant_turns) for e in examples]
        sequences = [s for s in sequences if s.trainable_tokens > 0]
        if not sequences:
            raise ValueError("no example has an assistant turn to train")
        steps = batches(len(sequences), settings.batch_size, settings.epochs, settings.seed)
    _started(report, {"num_sequences": len(steps), **started}, group)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    def loss_of(batch, chosen, tokens):
        return losses.sft_loss(_logits(model, batch), batch["targets"], batch["mask"], tokens), {}

    metrics: dict[str, float] = {}
    model.train()
    for step, indexes in enumerate(steps):
        chosen = [sequences[i] for i in indexes]
        metrics = {
            **_train_step(model, optimizer, settings, step, chosen, loss_of, pad_id, group, micro_batch),
            "num_sequences": float(len(indexes)),
        }
        _end_step(model, report, metrics, step, group)
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
    group: distributed.Group | None = None,
    micro_batch: int | None = None,
) -> dict[str, float]:
    group = group or distributed.Group()
    with group.agreement():
        # every rank reads every group: the advantages are the whole group's, before its trajectories are shared out
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
    _started(
        report,
        {
            "num_sequences": len(steps),
            "behaviour_logprobs_from_trajectories": sampled,
            "behaviour_logprobs_recomputed": len(sequences) - sampled,
            **started,
        },
        group,
    )
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    # The behaviour policy where a trajectory carried no logprobs: the weights this job starts from. Each sequence is
    # its own batch, so a rank computes the ones it trains (in FSDP, where a forward is a collective, all of them).
    if group.mode == "fsdp":
        needed = set(range(len(sequences)))
    else:
        needed = {indexes[i] for indexes in steps for part in parts(len(indexes), group, None) for i in part}
    model.eval()
    with group.agreement(), torch.no_grad():
        for n, s in enumerate(sequences):
            if n in needed and any(math.isnan(v) for v in s.logprobs):
                batch = pad([s], pad_id, group.device())
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

    def loss_of(batch, chosen, tokens):
        new = losses.token_logprobs(_logits(model, batch), batch["targets"])
        old = torch.where(torch.isnan(batch["old"]), new.detach(), batch["old"])
        advantages = torch.tensor([s.advantage for s in chosen], device=new.device)
        loss, policy = losses.policy_loss(
            new,
            old,
            advantages,
            batch["mask"],
            loss_fn=settings.loss_fn,
            epsilon=settings.epsilon,
            epsilon_high=settings.epsilon_high,
            importance_sampling_level=settings.importance_sampling_level,
            tokens=tokens,
        )
        parts_ = {"ratio_mean": policy["ratio_mean"], "clip_fraction": policy["clip_fraction"]}
        if settings.beta > 0:
            with torch.no_grad(), model.disable_adapter():
                reference = losses.token_logprobs(_logits(model, batch), batch["targets"])
            kl = losses.kl_penalty(new, reference, batch["mask"], tokens)
            loss = loss + settings.beta * kl
            parts_["kl_div"] = float(kl.detach())
        return loss, parts_

    for step, indexes in enumerate(steps):
        chosen = [sequences[i] for i in indexes]
        metrics = {
            **metrics,
            **_train_step(model, optimizer, settings, step, chosen, loss_of, pad_id, group, micro_batch),
        }
        _end_step(model, report, metrics, step, group)
    return metrics
