"""Several Tinker training clients held by one worker, against a fake server: each its own adapter and optimizer on the
one base, so that each one's results (and saved training state) equal those of the same client held alone by a fresh
worker; and one client held by a worker of two processes (torchrun, DDP: the datums shared out, the gradients summed)
answers what one process answers, until a killed rank releases it with the reason."""

import io
import os
import signal
import threading

import pytest
import torch
from fake_server import FakeServer, TinkerModel
from safetensors.torch import load
from test_distributed import rank_process, torchrun

from fulcrum_worker import distributed, protocol, tinker_desk
from fulcrum_worker import model as models


def datum(ids, **inputs):
    targets = ids[1:] + [ids[0]]
    loss_inputs = {"target_tokens": {"data": targets, "dtype": "int64"}}
    loss_inputs.update({k: {"data": v, "dtype": "float32"} for k, v in inputs.items()})
    return {"model_input": {"chunks": [{"type": "encoded_text", "tokens": ids}]}, "loss_fn_inputs": loss_inputs}


def backward(*data, loss_fn="cross_entropy"):
    return ("forward_backward", {"forward_backward_input": {"data": list(data), "loss_fn": loss_fn}})


def step(rate):
    return ("optim_step", {"adam_params": {"learning_rate": rate}})


def forward(*data):
    return ("forward", {"forward_input": {"data": list(data), "loss_fn": "cross_entropy"}})


SAVE = ("save_weights", {"path": "state"})


def first_model():
    a = [datum([5, 6, 7, 8, 9]), datum([11, 12, 13])]
    operations = [backward(*a), step(0.05), backward(a[0]), step(0.05), forward(*a), SAVE]
    lora = {"rank": 2, "seed": 3, "train_attn": True, "train_mlp": False, "train_unembed": False}
    return TinkerModel("a", lora, operations)


def second_model():
    b = [datum([40, 41, 42, 43]), datum([50, 51, 52, 53, 54, 55], advantages=[1.0] * 6, logprobs=[-3.0] * 6)]
    operations = [
        backward(b[0]),
        backward(datum([60, 10**6])),  # the user's error: adds nothing to the gradients
        step(0.02),
        backward(b[1], loss_fn="importance_sampling"),
        step(0.02),
        forward(*b),
        SAVE,
    ]
    lora = {"rank": 4, "seed": 9, "train_attn": True, "train_mlp": True, "train_unembed": False}
    return TinkerModel("b", lora, operations)


@pytest.fixture(scope="module")
def base(tiny_model_dir):
    return models.BaseModel("tiny", str(tiny_model_dir))


def serve(base, max_models, *tinker_models, release_together=False):
    """The models held by one worker of one process (the desk of `fulcrum-worker run`) until all are released."""
    with FakeServer(release_together=release_together) as server:
        for m in tinker_models:
            server.add_tinker(m)
        desk = tinker_desk.Desk(
            protocol.Server(server.url, "k"), "worker_1", tinker_desk.Sessions(base, distributed.Group()), max_models
        )
        assert desk.claim(0)
        done = threading.Thread(target=desk.serve, daemon=True)
        done.start()
        done.join(120)
        assert not done.is_alive(), "the worker still holds models"
    assert not any("lora" in n for n, _ in base.model.named_parameters()), "an adapter stayed on the base"
    return server


def answers(model):
    results = [model.result(seq) for seq in range(len(model.operations))]
    saved = model.uploads[model.request_id(len(model.operations) - 1)]
    return results, saved


def test_two_models_on_one_worker_each_answer_what_they_answer_alone(base):
    first = first_model()
    first.lose_answers = {2, 4}  # its optim_steps' answers: sent again, not run again
    together = serve(base, 2, first, second_model(), release_together=True)
    assert together.max_held == 2 and {q["max_models"] for q in together.claims} == {"2"}
    a, b = together.tinker
    assert a.released == b.released == "its session ended"
    # their operations took turns
    assert together.answers.index(b.request_id(1)) < together.answers.index(a.request_id(len(a.operations) - 1))
    assert b.result(2) == {"error": "a token id is not below the vocabulary size 1024", "category": "user"}
    assert a.lose_answers == set() and a.result(4)["result"]["metrics"]["step"] == 2
    for model, make in ((a, first_model), (b, second_model)):
        alone = serve(base, 1, make()).tinker[0]
        results, saved = answers(model)
        assert (results, saved) == answers(alone), model.model_id
        assert results[0] == {"result": {"model_id": model.model_id, "type": "create_model"}}
        assert set(saved) == {"adapter_config.json", "adapter_model.safetensors", "optimizer.pt"}
    # they trained apart: other adapters (ranks 2 and 4), both moved from their start
    a_weights, b_weights = (load(answers(m)[1]["adapter_model.safetensors"]) for m in (a, b))
    assert a_weights.keys() < b_weights.keys()
    assert a_weights["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"].shape[0] == 2
    for weights in (a_weights, b_weights):
        assert max(float(v.abs().max()) for n, v in weights.items() if ".lora_B." in n) > 1e-3


def test_two_processes_answer_what_one_answers_and_a_killed_rank_releases_the_model(base, tiny_model_dir):
    data = [datum([5, 6, 7, 8, 9]), datum([11, 12, 13]), datum([20, 21, 22, 23])]
    operations = [backward(*data), step(0.05), forward(data[1]), SAVE]
    lora = {"rank": 4, "seed": 5, "train_attn": True, "train_mlp": True, "train_unembed": False}
    with FakeServer() as server:
        held = server.add_tinker(TinkerModel("t", lora, operations, hold=True))
        process = torchrun(server, tiny_model_dir, 100, "--max-tinker-models", "2")
        assert held.answered.wait(180), process.kill() or process.communicate()[0]
        os.kill(rank_process(process, 1), signal.SIGKILL)
        output, _ = process.communicate(timeout=120)
    assert process.returncode != 0
    assert held.released.startswith("the fulcrum-worker's process group broke"), output
    torch.use_deterministic_algorithms(True)
    try:
        one = serve(base, 1, TinkerModel("t", lora, operations)).tinker[0]
    finally:
        torch.use_deterministic_algorithms(False)
    (_, fb, optim, fwd, _), saved = answers(held)
    (_, fb_one, optim_one, fwd_one, _), saved_one = answers(one)
    for mine, theirs in ((fb, fb_one), (fwd, fwd_one)):
        assert mine["result"]["metrics"] == pytest.approx(theirs["result"]["metrics"], rel=1e-5)
        outputs = zip(mine["result"]["loss_fn_outputs"], theirs["result"]["loss_fn_outputs"], strict=True)
        for output, expected in outputs:
            assert output["logprobs"]["data"] == pytest.approx(expected["logprobs"]["data"], rel=1e-5, abs=1e-6)
    assert len(fb["result"]["loss_fn_outputs"]) == 3
    assert optim["result"]["metrics"] == pytest.approx(optim_one["result"]["metrics"], rel=1e-5)
    weights, expected = load(saved["adapter_model.safetensors"]), load(saved_one["adapter_model.safetensors"])
    assert weights.keys() == expected.keys()
    for name, value in expected.items():
        torch.testing.assert_close(weights[name], value, rtol=0, atol=1e-6)
    state = torch.load(io.BytesIO(saved["optimizer.pt"]), weights_only=True)["state"]
    reference = torch.load(io.BytesIO(saved_one["optimizer.pt"]), weights_only=True)["state"]
    for name, moments in reference.items():
        torch.testing.assert_close(state[name]["exp_avg"], moments["exp_avg"], rtol=1e-4, atol=1e-7)
        torch.testing.assert_close(state[name]["exp_avg_sq"], moments["exp_avg_sq"], rtol=1e-4, atol=1e-10)
