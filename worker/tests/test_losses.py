"""The policy losses against numbers computed by hand for a batch of two sequences.

Sequence 1 (advantage +1): behaviour probabilities 0.5, 0.5; new 0.75, 0.25 -> ratios 1.5, 0.5.
Sequence 2 (advantage -1): behaviour 0.4, new 0.6 -> ratio 1.5; its second token is masked out.
Means are over the 3 trained tokens. ln 0.75 = -0.2876821, ln 0.25 = -1.3862944, ln 0.6 = -0.5108256.
"""

import math

import pytest
import torch

from fulcrum_worker.losses import (
    balance_advantage,
    group_advantages,
    kl_penalty,
    normalize_advantages,
    policy_loss,
    sft_loss,
)


def batch():
    new = torch.tensor([[math.log(0.75), math.log(0.25)], [math.log(0.6), math.log(0.9)]], requires_grad=True)
    old = torch.tensor([[math.log(0.5), math.log(0.5)], [math.log(0.4), math.log(0.1)]])
    advantages = torch.tensor([1.0, -1.0])
    mask = torch.tensor([[1, 1], [1, 0]], dtype=torch.bool)
    return new, old, advantages, mask


def loss_and_grad(**kwargs):
    new, old, advantages, mask = batch()
    loss, metrics = policy_loss(new, old, advantages, mask, **kwargs)
    loss.backward()
    return float(loss.detach()), new.grad.flatten().tolist(), metrics


def test_ppo_token_level_clips_the_ratio_where_it_would_gain():
    # -min(r A, clip(r, 0.8, 1.2) A): 1.5 * +1 -> 1.2 (clipped, no gradient); 0.5 * +1 -> 0.5; 1.5 * -1 -> -1.5
    loss, grad, metrics = loss_and_grad(loss_fn="ppo")
    assert loss == pytest.approx((-1.2 - 0.5 + 1.5) / 3, abs=1e-6)
    # d/d logp of -r A = -r A / 3 where unclipped
    assert grad == pytest.approx([0.0, -0.5 / 3, 1.5 / 3, 0.0], abs=1e-6)
    assert metrics["clip_fraction"] == pytest.approx(1 / 3)


def test_ppo_epsilon_high_widens_the_upper_bound_only():
    loss, _, metrics = loss_and_grad(loss_fn="ppo", epsilon=0.2, epsilon_high=0.6)
    assert loss == pytest.approx((-1.5 - 0.5 + 1.5) / 3, abs=1e-6)
    assert metrics["clip_fraction"] == 0


def test_cispo_token_level_weights_log_probabilities_by_the_stopped_ratio():
    # default bounds [0, 5]: weights 1.5, 0.5, 1.5; loss -w A log pi
    loss, grad, _ = loss_and_grad()
    expected = (-1.5 * -0.2876821 + -0.5 * -1.3862944 + 1.5 * -0.5108256) / 3
    assert expected == pytest.approx(0.1194773, abs=1e-6)
    assert loss == pytest.approx(expected, abs=1e-6)
    # the weight passes no gradient: d/d logp = -w A / 3, for every trained token, clipped or not
    assert grad == pytest.approx([-0.5, -0.5 / 3, 0.5, 0.0], abs=1e-6)


def test_cispo_clips_the_weight_at_one_plus_epsilon_high():
    loss, grad, metrics = loss_and_grad(loss_fn="cispo", epsilon_high=0.2)
    assert loss == pytest.approx((1.2 * 0.2876821 + 0.5 * 1.3862944 - 1.2 * 0.5108256) / 3, abs=1e-6)
    assert loss == pytest.approx(0.1417917, abs=1e-6)
    assert grad == pytest.approx([-0.4, -0.5 / 3, 0.4, 0.0], abs=1e-6)
    assert metrics["clip_fraction"] == pytest.approx(2 / 3)


def test_sequence_level_uses_the_geometric_mean_ratio_of_each_sequence():
    # sequence 1: exp((ln 1.5 + ln 0.5) / 2) = sqrt(0.75) = 0.8660254 for both tokens; sequence 2: 1.5
    loss, _, _ = loss_and_grad(loss_fn="ppo", importance_sampling_level="sequence")
    assert loss == pytest.approx((-2 * 0.8660254 + 1.5) / 3, abs=1e-6)
    loss, _, _ = loss_and_grad(loss_fn="cispo", importance_sampling_level="sequence")
    expected = (0.8660254 * 0.2876821 + 0.8660254 * 1.3862944 - 1.5 * 0.5108256) / 3
    assert expected == pytest.approx(0.2278226, abs=1e-6)
    assert loss == pytest.approx(expected, abs=1e-6)


def test_on_policy_ppo_is_minus_the_mean_advantage_with_the_policy_gradient():
    new, _, advantages, mask = batch()
    loss, metrics = policy_loss(new, new.detach(), advantages, mask, loss_fn="ppo")
    assert float(loss.detach()) == pytest.approx((-1 - 1 + 1) / 3, abs=1e-6)
    assert metrics["ratio_mean"] == pytest.approx(1.0)


def test_unknown_settings_are_refused():
    new, old, advantages, mask = batch()
    with pytest.raises(ValueError, match="loss_fn"):
        policy_loss(new, old, advantages, mask, loss_fn="grpo")
    with pytest.raises(ValueError, match="importance_sampling_level"):
        policy_loss(new, old, advantages, mask, importance_sampling_level="geometric")


def test_group_advantages_are_centred_and_scaled_by_the_group_std():
    assert group_advantages([1, 0, 0, 1]) == pytest.approx([1, -1, -1, 1], abs=1e-5)
    assert group_advantages([1, 0, 0, 1], scale_rewards=False) == pytest.approx([0.5, -0.5, -0.5, 0.5])
    assert group_advantages([3, 3]) == [0, 0]
    # rewards 2, 4, 9: mean 5, deviations -3, -1, 4, std sqrt(26/3) = 2.9439203
    assert group_advantages([2, 4, 9]) == pytest.approx([-1.0190493, -0.3396831, 1.3587324], abs=1e-6)


def test_sft_loss_is_the_mean_cross_entropy_of_masked_in_tokens():
    # uniform logits over 4 tokens: ln 4 for each masked-in token, whatever the targets
    logits = torch.zeros(1, 3, 4)
    loss = sft_loss(logits, torch.tensor([[0, 1, 2]]), torch.tensor([[0, 1, 1]]))
    assert float(loss) == pytest.approx(math.log(4))


def test_advantage_balance_weighs_positive_and_negative_advantages():
    assert [balance_advantage(a, 0.0) for a in (2.0, -2.0)] == [2.0, -2.0]
    assert [balance_advantage(a, 0.5) for a in (2.0, -2.0)] == [3.0, -1.0]
    assert [balance_advantage(a, -1.0) for a in (2.0, -2.0)] == [0.0, -4.0]
    assert [balance_advantage(a, 1.0) for a in (2.0, -2.0)] == [4.0, 0.0]
    with pytest.raises(ValueError, match="advantage_balance"):
        balance_advantage(1.0, 1.5)


def test_kl_penalty_is_the_mean_k3_estimate_over_trained_tokens():
    # new ln 0.75, ref ln 0.5: d = ln(2/3) = -0.4054651, exp(d) - d - 1 = 0.0721318; equal tokens give 0;
    # the masked-out token (new ln 0.9, ref ln 0.1) counts for nothing
    new = torch.tensor([[math.log(0.75), math.log(0.25)], [math.log(0.9), math.log(0.9)]])
    ref = torch.tensor([[math.log(0.5), math.log(0.25)], [math.log(0.9), math.log(0.1)]])
    mask = torch.tensor([[1, 1], [1, 0]], dtype=torch.bool)
    assert float(kl_penalty(new, ref, mask)) == pytest.approx(0.0721318 / 3, abs=1e-6)


def test_normalize_advantages_gives_the_whole_batch_zero_mean_and_unit_std():
    # 3, 1, -1, -3: mean 0, std sqrt(5) = 2.2360680 (within the 1e-6 the divisor adds against a zero std)
    assert normalize_advantages([3, 1, -1, -3]) == pytest.approx(
        [1.3416408, 0.4472136, -0.4472136, -1.3416408], abs=1e-6
    )
    # 2, 2, 5: mean 3, deviations -1, -1, 2, std sqrt(2) = 1.4142136
    assert normalize_advantages([2, 2, 5]) == pytest.approx([-0.7071068, -0.7071068, 1.4142136], abs=1e-5)
    assert normalize_advantages([4, 4]) == [0.0, 0.0]
    assert normalize_advantages([]) == []


def test_the_parts_of_a_batch_over_its_whole_token_count_add_up_to_the_batch():
    # a rank (or micro-batch) with sequence 1 alone and one with sequence 2 alone, each divided by the batch's 3 tokens
    new, old, advantages, mask = batch()
    whole, whole_metrics = policy_loss(new, old, advantages, mask, loss_fn="ppo")
    first, first_metrics = policy_loss(new[:1], old[:1], advantages[:1], mask[:1], loss_fn="ppo", tokens=3)
    second, second_metrics = policy_loss(new[1:], old[1:], advantages[1:], mask[1:], loss_fn="ppo", tokens=3)
    # by hand (PPO, above): sequence 1 gives -1.2 - 0.5, sequence 2 gives +1.5, over 3 tokens
    assert float(first) == pytest.approx((-1.2 - 0.5) / 3, abs=1e-6)
    assert float(second) == pytest.approx(1.5 / 3, abs=1e-6)
    assert float(first + second) == pytest.approx(float(whole), abs=1e-7)
    for key in ("ratio_mean", "clip_fraction"):
        assert first_metrics[key] + second_metrics[key] == pytest.approx(whole_metrics[key], abs=1e-7)
    # over its own 2 tokens, the first part alone would weigh its tokens 3/2 as much
    alone, _ = policy_loss(new[:1], old[:1], advantages[:1], mask[:1], loss_fn="ppo")
    assert float(alone) == pytest.approx((-1.2 - 0.5) / 2, abs=1e-6)
    # the same for SFT's cross-entropy (ln 2 on each of 2 tokens, then ln 9 on one; 3 tokens in all) and the KL term
    logits = torch.zeros(2, 2, 4)
    logits[1, 0] = torch.tensor([math.log(4.0), 0.0, 0.0, math.log(3.0)])  # p(1) = 1 / (4 + 1 + 1 + 3) = 1/9
    logits[0, :, :2] = 10.0  # two likely words: about 1/2 each
    targets = torch.tensor([[0, 1], [1, 0]])
    parts = sft_loss(logits[:1], targets[:1], mask[:1], tokens=3) + sft_loss(
        logits[1:], targets[1:], mask[1:], tokens=3
    )
    assert float(parts) == pytest.approx(float(sft_loss(logits, targets, mask)), abs=1e-6)
    assert float(parts) == pytest.approx((2 * math.log(2) + math.log(9)) / 3, abs=1e-3)
    reference = torch.zeros(2, 2)
    kl = kl_penalty(new[:1], reference[:1], mask[:1], 3) + kl_penalty(new[1:], reference[1:], mask[1:], 3)
    assert float(kl) == pytest.approx(float(kl_penalty(new, reference, mask)), abs=1e-7)
