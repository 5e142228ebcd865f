"""The Tinker API's loss functions, as its documentation defines them, as small pure functions over one datum.

Each takes the target tokens' log-probabilities under the weights being trained (`lp`, differentiable, shape [N]) and
the datum's inputs, and answers the per-token loss ([N]); the loss is its plain sum (over tokens, and then over the
datums of the call: Tinker sums, it does not average). `q` = the sampling log-probabilities (`logprobs`), `A` = the
`advantages`, `r = exp(lp - q)`.

- cross_entropy: -lp * w (w = `weights`, default 1)
- importance_sampling: -r * A
- ppo: -min(r * A, clip(r, lo, hi) * A), lo/hi = clip_low_threshold/clip_high_threshold (default 0.8, 1.2)
- cispo: -sg(clip(r, lo, hi)) * lp * A (default lo 0, hi 4; sg: no gradient through the weight)
- dro: -(lp * A - beta / 2 * (lp - q)^2) (beta required)

The ratio losses' diagnostics (the ratios' sum, the clipped tokens) count only the positions that carry the loss, those
with a nonzero advantage (the sampled tokens; the prompt's positions have A = 0 and q = 0, where r = exp(lp) means
nothing), and say how many there were (`ratio_tokens`), so that `ratio:mean` is the mean over them.
"""

from __future__ import annotations

import torch

LOSSES = ("cross_entropy", "importance_sampling", "ppo", "cispo", "dro")
CLIP_DEFAULTS = {"ppo": (0.8, 1.2), "cispo": (0.0, 4.0)}


def _needs(inputs: dict[str, torch.Tensor], *keys: str) -> list[torch.Tensor]:
    missing = [k for k in keys if k not in inputs]
    if missing:
        raise ValueError(f"the loss needs loss_fn_inputs {', '.join(missing)}")
    return [inputs[k] for k in keys]


def per_token_loss(
    loss_fn: str, lp: torch.Tensor, inputs: dict[str, torch.Tensor], config: dict[str, float] | None = None
) -> tuple[torch.Tensor, dict[str, float]]:
    """The per-token loss of one datum, and the loss's diagnostics summed over the tokens that carry it (the sum of
    ratios, `ratio_tokens` and `clipped` tokens, for the ratio losses)."""
    config = config or {}
    if loss_fn == "cross_entropy":
        weights = inputs.get("weights", torch.ones_like(lp))
        return -lp * weights.to(lp.dtype), {}
    if loss_fn not in LOSSES:
        raise ValueError(f"loss_fn must be one of {', '.join(LOSSES)}, not {loss_fn!r}")
    q, advantages = (t.to(lp.dtype) for t in _needs(inputs, "logprobs", "advantages"))
    ratio = torch.exp(lp - q)
    carried = advantages != 0
    diagnostics = {"ratio": float(ratio.detach()[carried].sum()), "ratio_tokens": float(carried.sum())}
    if loss_fn == "importance_sampling":
        return -ratio * advantages, diagnostics
    if loss_fn == "dro":
        if "beta" not in config:
            raise ValueError("dro needs loss_fn_config beta")
        beta = float(config["beta"])
        return -(lp * advantages - 0.5 * beta * (lp - q) ** 2), diagnostics
    low_default, high_default = CLIP_DEFAULTS[loss_fn]
    low = float(config.get("clip_low_threshold", low_default))
    high = float(config.get("clip_high_threshold", high_default))
    if low > high:
        raise ValueError(f"clip_low_threshold {low} is above clip_high_threshold {high}")
    clipped = torch.clamp(ratio, low, high)
    if loss_fn == "ppo":
        loss = -torch.minimum(ratio * advantages, clipped * advantages)
        clipped_tokens = (ratio * advantages) > (clipped * advantages)
    else:
        loss = -clipped.detach() * lp * advantages
        clipped_tokens = ratio != clipped
    return loss, {**diagnostics, "clipped": float((clipped_tokens & carried).sum())}


def target_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The log-probability of each target ([N]) under the logits ([N, V]) at temperature 1."""
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
