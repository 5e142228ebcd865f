"""The Tinker losses against numbers computed by hand, and their gradients against the documented derivatives.

One datum of three tokens: lp = ln 0.5, ln 0.25, ln 0.9; sampling q = ln 0.5, ln 0.5, ln 0.6 -> ratios 1, 0.5, 1.5.
"""

import math

import pytest
import torch

from fulcrum_worker.tinker_losses import per_token_loss, target_logprobs

LP = [math.log(0.5), math.log(0.25), math.log(0.9)]
Q = [math.log(0.5), math.log(0.5), math.log(0.6)]


def run(loss_fn, advantages=(1.0, 1.0, -1.0), config=None, weights=None):
    lp = torch.tensor(LP, requires_grad=True)
    inputs = {"logprobs": torch.tensor(Q), "advantages": torch.tensor(advantages)}
    if weights is not None:
        inputs["weights"] = torch.tensor(weights)
    loss, metrics = per_token_loss(loss_fn, lp, inputs, config)
    loss.sum().backward()
    return loss.detach().tolist(), lp.grad.tolist(), metrics


def test_cross_entropy_is_the_weighted_sum_of_negative_logprobs():
    loss, grad, _ = run("cross_entropy", weights=[0.0, 1.0, 2.0])
    assert loss == pytest.approx([0.0, math.log(4), -2 * math.log(0.9)])
    assert grad == pytest.approx([0.0, -1.0, -2.0])


def test_cross_entropy_weights_default_to_one():
    lp = torch.tensor(LP, requires_grad=True)
    loss, _ = per_token_loss("cross_entropy", lp, {})
    assert float(loss.detach().sum()) == pytest.approx(-sum(LP))


def test_importance_sampling_is_minus_ratio_times_advantage():
    loss, grad, metrics = run("importance_sampling")
    assert loss == pytest.approx([-1.0, -0.5, 1.5])
    # d(-r A)/dlp = -r A
    assert grad == pytest.approx([-1.0, -0.5, 1.5])
    assert metrics["ratio"] == pytest.approx(3.0)


def test_ppo_clips_with_absolute_thresholds_and_passes_no_gradient_where_clipped():
    # token 2: r 0.5, A +1: min(0.5, 0.8) = 0.5 (unclipped term); token 3: r 1.5, A -1: min(-1.5, -1.2) = -1.5
    loss, grad, metrics = run("ppo")
    assert loss == pytest.approx([-1.0, -0.5, 1.5])
    assert grad == pytest.approx([-1.0, -0.5, 1.5])
    assert metrics["clipped"] == 0
    # advantages all +1: token 3's ratio 1.5 is clipped to 1.2, which is the min: no gradient there
    loss, grad, metrics = run("ppo", advantages=(1.0, 1.0, 1.0))
    assert loss == pytest.approx([-1.0, -0.5, -1.2])
    assert grad == pytest.approx([-1.0, -0.5, 0.0])
    assert metrics["clipped"] == 1
    loss, _, _ = run("ppo", advantages=(1.0, 1.0, 1.0), config={"clip_low_threshold": 0.9, "clip_high_threshold": 1.4})
    assert loss == pytest.approx([-1.0, -0.5, -1.4])


def test_cispo_weighs_the_logprob_by_the_clipped_ratio_without_its_gradient():
    loss, grad, metrics = run("cispo", config={"clip_high_threshold": 1.2})
    # -clip(r, 0, 1.2) * lp * A: weights 1, 0.5, 1.2
    assert loss == pytest.approx([-LP[0], -0.5 * LP[1], 1.2 * LP[2]])
    assert grad == pytest.approx([-1.0, -0.5, 1.2])
    assert metrics["clipped"] == 1
    loss, _, _ = run("cispo")  # default upper bound 4: nothing clipped
    assert loss == pytest.approx([-LP[0], -0.5 * LP[1], 1.5 * LP[2]])


def test_dro_adds_a_quadratic_penalty_and_needs_beta():
    loss, grad, _ = run("dro", config={"beta": 0.5})
    d = [a - b for a, b in zip(LP, Q, strict=True)]
    adv = [1.0, 1.0, -1.0]
    assert loss == pytest.approx([-(lp * a - 0.25 * x * x) for lp, a, x in zip(LP, adv, d, strict=True)])
    assert grad == pytest.approx([-(a - 0.5 * x) for a, x in zip(adv, d, strict=True)])
    with pytest.raises(ValueError, match="beta"):
        run("dro")


def test_unknown_losses_and_missing_inputs_are_refused():
    lp = torch.tensor(LP)
    with pytest.raises(ValueError, match="loss_fn"):
        per_token_loss("reinforce", lp, {"logprobs": lp, "advantages": lp})
    with pytest.raises(ValueError, match="advantages"):
        per_token_loss("ppo", lp, {"logprobs": lp})


def test_target_logprobs_are_a_log_softmax_at_the_targets():
    logits = torch.tensor([[0.0, math.log(3.0)], [math.log(3.0), 0.0]])
    assert target_logprobs(logits, torch.tensor([1, 1])).tolist() == pytest.approx([math.log(0.75), math.log(0.25)])


def test_ratio_diagnostics_count_only_the_positions_that_carry_the_loss():
    # two prompt positions first (A = 0, q = 0, as the SDK and ART send them: r = exp(lp) there), then the 3 sampled
    lp = torch.tensor([math.log(0.1), math.log(0.2), *LP])
    inputs = {"logprobs": torch.tensor([0.0, 0.0, *Q]), "advantages": torch.tensor([0.0, 0.0, 1.0, 1.0, 1.0])}
    for loss_fn in ("importance_sampling", "ppo", "cispo", "dro"):
        _, metrics = per_token_loss(loss_fn, lp, inputs, {"beta": 0.5} if loss_fn == "dro" else None)
        assert metrics["ratio"] == pytest.approx(3.0), loss_fn  # 1 + 0.5 + 1.5, not + 0.1 + 0.2
        assert metrics["ratio_tokens"] == 3, loss_fn
    # the prompt's ratios 0.1 and 0.2 lie below ppo's 0.8: not clipped tokens, as they carry no loss
    _, metrics = per_token_loss("ppo", lp, inputs)
    assert metrics["clipped"] == 1
