"""Policy losses and advantages as small pure functions over tensors (tested against hand-computed numbers)."""

from __future__ import annotations

import math

import torch

# Defaults: PPO clips the ratio to [1 - 0.2, 1 + 0.2]; CISPO clips the (stop-gradient) importance weight to
# [1 - 1.0, 1 + 4.0], i.e. no lower bound and an upper bound of 5, as the MiniMax-M1 paper tunes only the top.
DEFAULT_EPSILON = {"ppo": 0.2, "cispo": 1.0}
DEFAULT_EPSILON_HIGH = {"ppo": None, "cispo": 4.0}


def group_advantages(rewards: list[float], scale_rewards: bool = True) -> list[float]:
    """Group-relative advantages: reward minus the group's mean, divided by the group's std when `scale_rewards`."""
    mean = sum(rewards) / len(rewards)
    centred = [r - mean for r in rewards]
    if not scale_rewards:
        return centred
    std = math.sqrt(sum(c * c for c in centred) / len(centred))
    return [c / (std + 1e-6) for c in centred]


def normalize_advantages(advantages: list[float]) -> list[float]:
    """
    The job's advantages, across all its groups, centred on their mean and divided by their std (unit variance for the
    whole batch, as PPO implementations normalise); all equal: all zero.
    """
    if not advantages:
        return []
    mean = sum(advantages) / len(advantages)
    centred = [a - mean for a in advantages]
    std = math.sqrt(sum(c * c for c in centred) / len(centred))
    return [c / (std + 1e-6) if std > 0 else 0.0 for c in centred]


def balance_advantage(advantage: float, balance: float) -> float:
    """
    ART's `advantage_balance` in [-1, 1]: positive advantages weigh 1 + balance, negative ones 1 - balance, so 0 keeps
    them as they are, 1 trains only on positive advantages and -1 only on negative ones.
    """
    if not -1.0 <= balance <= 1.0:
        raise ValueError(f"advantage_balance must be between -1 and 1, not {balance!r}")
    return advantage * (1 + balance) if advantage > 0 else advantage * (1 - balance)


def kl_penalty(
    new_logprobs: torch.Tensor, ref_logprobs: torch.Tensor, mask: torch.Tensor, tokens: float | None = None
) -> torch.Tensor:
    """
    The KL divergence of the policy from the reference (the base model without the adapter), estimated per token as
    exp(ref - new) - (ref - new) - 1 (never negative, zero where they agree), averaged over the trained tokens; the
    loss adds `beta` times it. `tokens`: the denominator (default: the mask's trained tokens; see `sft_loss`).
    """
    mask = mask.to(new_logprobs.dtype)
    delta = ref_logprobs - new_logprobs
    per_token = torch.exp(delta) - delta - 1.0
    return (per_token * mask).sum() / _count(mask, tokens)


def _count(mask: torch.Tensor, tokens: float | None) -> torch.Tensor | float:
    return mask.sum().clamp(min=1) if tokens is None else max(float(tokens), 1.0)


def policy_loss(
    new_logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    loss_fn: str = "cispo",
    epsilon: float | None = None,
    epsilon_high: float | None = None,
    importance_sampling_level: str = "token",
    tokens: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """
    The policy loss, averaged over the trained tokens of the batch.

    new_logprobs, old_logprobs, mask: [B, T] (log-probabilities of the taken tokens under the policy being trained and
    under the behaviour policy that sampled them; mask 1 for trained tokens); advantages: [B] (one per sequence).
    `importance_sampling_level` `token`: one ratio per token; `sequence`: the geometric mean of a sequence's token
    ratios, for all its tokens (GSPO).
    - `ppo`: -min(r * A, clip(r, 1 - eps, 1 + eps_high) * A)
    - `cispo`: -sg(clip(r, 1 - eps, 1 + eps_high)) * A * log pi (the clipped weight passes no gradient; every
      token keeps its gradient through log pi)
    `tokens`: the denominator of the loss and of its metrics (default: the mask's trained tokens; see `sft_loss`).
    """
    if loss_fn not in DEFAULT_EPSILON:
        raise ValueError(f"loss_fn must be one of {sorted(DEFAULT_EPSILON)}, not {loss_fn!r}")
    if importance_sampling_level not in ("token", "sequence"):
        raise ValueError(f"importance_sampling_level must be token or sequence, not {importance_sampling_level!r}")
    eps = DEFAULT_EPSILON[loss_fn] if epsilon is None else epsilon
    eps_high = epsilon_high if epsilon_high is not None else DEFAULT_EPSILON_HIGH[loss_fn]
    eps_high = eps if eps_high is None else eps_high
    mask = mask.to(new_logprobs.dtype)
    log_ratio = (new_logprobs - old_logprobs) * mask
    if importance_sampling_level == "sequence":
        per_sequence = log_ratio.sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True).clamp(min=1)
        log_ratio = per_sequence.expand_as(new_logprobs)
    ratio = torch.exp(log_ratio)
    adv = advantages.to(new_logprobs.dtype).unsqueeze(1)
    low, high = 1 - eps, 1 + eps_high
    clipped = torch.clamp(ratio, low, high)
    if loss_fn == "ppo":
        per_token = -torch.minimum(ratio * adv, clipped * adv)
        clipped_tokens = ((ratio * adv) > (clipped * adv)) & (mask > 0)
    else:
        per_token = -clipped.detach() * adv * new_logprobs
        clipped_tokens = (ratio != clipped) & (mask > 0)
    tokens = _count(mask, tokens)
    loss = (per_token * mask).sum() / tokens
    metrics = {
        "policy_loss": float(loss.detach()),
        "ratio_mean": float((ratio.detach() * mask).sum() / tokens),
        "clip_fraction": float(clipped_tokens.sum() / tokens),
    }
    return loss, metrics


def sft_loss(
    logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, tokens: float | None = None
) -> torch.Tensor:
    """
    Cross-entropy of the targets ([B, T]) given logits ([B, T, V]), averaged over the masked-in tokens. `tokens`, when
    given, is the denominator instead: the trained tokens of the whole step, when this batch is one part of it (a
    rank's share, a micro-batch), so that the parts' losses, and their gradients, add up to the whole step's.
    """
    losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2).float(), targets, reduction="none")
    mask = mask.to(losses.dtype)
    return (losses * mask).sum() / _count(mask, tokens)


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Log-probability of each target token ([B, T]) under logits ([B, T, V])."""
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
