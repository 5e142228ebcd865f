"""A Tinker training client's model on the tiny Llama: gradients accumulate over forward_backward calls until
optim_step applies and clears them, forward keeps none, and the LoRA flags choose the adapted modules."""

import pytest
import torch

from fulcrum_worker import model as models
from fulcrum_worker import tinker

LORA = {"rank": 2, "seed": 3, "train_attn": True, "train_mlp": False, "train_unembed": False}


def datum(ids):
    targets = ids[1:] + [ids[0]]
    return {
        "model_input": {"chunks": [{"type": "encoded_text", "tokens": ids}]},
        "loss_fn_inputs": {"target_tokens": {"data": targets, "dtype": "int64"}},
    }


@pytest.fixture(scope="module")
def base(tiny_model_dir):
    return models.BaseModel("tiny", str(tiny_model_dir))


def grads(session):
    return [p.grad.clone() for p in session.parameters]


def test_gradients_of_two_calls_add_up_to_those_of_one_call_with_both(base):
    a, b = datum([5, 6, 7, 8]), datum([9, 10, 11])
    session = tinker.Session(tinker.Adapters(base), LORA)
    try:
        # B starts at zero: one step first, so that every LoRA weight has a gradient
        session.forward({"data": [a], "loss_fn": "cross_entropy"}, backward=True)
        session.optim_step({"learning_rate": 0.01})
        both = session.forward({"data": [a, b], "loss_fn": "cross_entropy"}, backward=True)
        together = grads(session)
        session.optimizer.zero_grad(set_to_none=True)
        first = session.forward({"data": [a], "loss_fn": "cross_entropy"}, backward=True)
        second = session.forward({"data": [b], "loss_fn": "cross_entropy"}, backward=True)
        for g, h in zip(together, grads(session), strict=True):
            assert torch.allclose(g, h, atol=1e-6)
        assert both["metrics"]["loss:sum"] == pytest.approx(
            first["metrics"]["loss:sum"] + second["metrics"]["loss:sum"], rel=1e-5
        )
        assert [len(o["logprobs"]["data"]) for o in both["loss_fn_outputs"]] == [4, 3]
        assert both["metrics"]["ntokens:sum"] == 7
    finally:
        session.close()


def test_forward_keeps_no_gradient_and_optim_step_lowers_the_loss_and_clears_them(base):
    data = {"data": [datum([5, 6, 7, 8, 9])], "loss_fn": "cross_entropy"}
    session = tinker.Session(tinker.Adapters(base), LORA)
    try:
        before = session.forward(data, backward=False)["metrics"]["loss:sum"]
        assert all(p.grad is None for p in session.parameters)
        for _ in range(5):
            session.forward(data, backward=True)
            metrics = session.optim_step({"learning_rate": 0.05, "grad_clip_norm": 1.0})["metrics"]
            assert all(p.grad is None for p in session.parameters)
        assert metrics["step"] == 5
        assert session.forward(data, backward=False)["metrics"]["loss:sum"] < before
    finally:
        session.close()


def test_the_flags_choose_the_modules_and_a_tied_output_layer_is_refused(base):
    session = tinker.Session(tinker.Adapters(base), {**LORA, "train_attn": False, "train_mlp": True})
    try:
        names = [n for n, p in session.model.named_parameters() if p.requires_grad]
        assert names and all(any(m in n for m in tinker.MLP) for n in names)
    finally:
        session.close()
    base.model.config.tie_word_embeddings = True
    try:
        with pytest.raises(tinker.UserError, match="train_unembed=False"):
            tinker.lora_settings({**LORA, "train_unembed": True}, base)
    finally:
        base.model.config.tie_word_embeddings = False


def test_a_token_outside_the_vocabulary_is_the_users_error(base):
    session = tinker.Session(tinker.Adapters(base), LORA)
    try:
        with pytest.raises(tinker.UserError, match="vocabulary"):
            session.forward({"data": [datum([5, 10**6])], "loss_fn": "cross_entropy"}, backward=False)
    finally:
        session.close()


def test_a_saved_training_state_loaded_with_its_optimizer_takes_the_same_next_step(base):
    data = {"data": [datum([5, 6, 7, 8, 9])], "loss_fn": "cross_entropy"}
    adam = {"learning_rate": 0.05}

    def step(session):
        backward = session.forward(data, backward=True)["metrics"]["loss:sum"]
        metrics = session.optim_step(adam)["metrics"]
        return backward, metrics["grad_norm"], metrics["step"], session.forward(data, backward=False)["metrics"]

    session = tinker.Session(tinker.Adapters(base), LORA)
    try:
        for _ in range(3):
            step(session)
        files = session.state()
        assert set(files) == {"adapter_config.json", "adapter_model.safetensors", "optimizer.pt"}
        reference = step(session)
        step(session)  # the model moves on; loading brings it back
        assert session.load(files, with_optimizer=True) == {"optimizer": True}
        assert step(session) == reference
        # without the optimizer: the same weights, a fresh AdamW (its first step, another update)
        session.load(files, with_optimizer=False)
        fresh = step(session)
        assert fresh[0] == reference[0] and fresh[2] == 1 and fresh[3] != reference[3]
        with pytest.raises(tinker.UserError, match="no training state"):
            session.load({"adapter_model.safetensors": files["adapter_model.safetensors"]}, with_optimizer=True)
    finally:
        session.close()


def test_a_failed_forward_backward_adds_no_gradient(base):
    session = tinker.Session(tinker.Adapters(base), LORA)
    try:
        session.forward({"data": [datum([5, 6, 7])], "loss_fn": "cross_entropy"}, backward=True)
        before = grads(session)
        # the first datum's backward runs, the second is refused: the call adds nothing
        with pytest.raises(tinker.UserError, match="vocabulary"):
            bad = {"data": [datum([8, 9, 10]), datum([5, 10**6])], "loss_fn": "cross_entropy"}
            session.forward(bad, backward=True)
        for g, h in zip(before, grads(session), strict=True):
            assert torch.equal(g, h)
    finally:
        session.close()
