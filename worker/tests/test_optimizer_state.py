"""A model's AdamW state carries from one job to the next: in the worker's memory, and through the checkpoint's
`optimizer.pt` for another worker or a restart; a job that cannot continue it starts fresh and says why."""

import io
import math
import tempfile
from pathlib import Path

import pytest
import torch
from safetensors.torch import load
from test_runner import FakeJob

from fulcrum_worker import data, losses, optimizer_state, runner, training
from fulcrum_worker import model as models

B1, B2, EPS = 0.9, 0.999, 1e-8  # torch's AdamW defaults, the worker's
LR1, LR2 = 1e-2, 3e-3
LORA = models.LoraSettings(rank=4, alpha=8)
EXAMPLE = {"messages": [{"role": "user", "content": "Capital of France?"}, {"role": "assistant", "content": "Paris"}]}


@pytest.fixture(scope="module")
def base(tiny_model_dir):
    return models.BaseModel("tiny", str(tiny_model_dir))


def sft_job(learning_rate, **claim):
    """A job of one SFT step on EXAMPLE, without clipping (so the step's gradient is the loss's own)."""
    config = {"learning_rate": learning_rate, "batch_size": 1, "epochs": 1, "max_grad_norm": 1e9}
    return FakeJob("sft", {"kind": "sft", "config": config, "examples": [EXAMPLE]}, **claim)


def rl_job(**claim):
    def trajectory(answer, reward):
        choice = {"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": answer}}
        return {"messages_and_choices": [{"role": "user", "content": "Say 7"}, choice], "reward": reward}

    groups = [{"trajectories": [trajectory("7", 1), trajectory("no", 0)]}]
    config = {"learning_rate": LR1, "batch_size": 2}
    return FakeJob("rl", {"kind": "rl", "config": config, "trajectory_groups": groups}, **claim)


def run(job, base, memory, lora=LORA):
    assert runner.run_job(job, base, lora, memory) == "succeeded", job.calls
    return job.events[0][1]


def adapter(files):
    """The adapter's weights by parameter name (peft's names in the model: `.default` is the adapter's name)."""
    return {
        name.replace(".weight", ".default.weight"): w for name, w in load(files["adapter_model.safetensors"]).items()
    }


def start_and_gradient(base, files):
    """The trainable weights a job starting from `files` (None: a new adapter) begins with, and the gradient of
    EXAMPLE's loss there, computed here the way the job computes it."""
    with tempfile.TemporaryDirectory() as directory:
        if files is not None:
            for path in models.ADAPTER_FILES:
                Path(directory, path).write_bytes(files[path])
        peft_model = base.with_adapter(directory if files is not None else None, LORA, seed=0)
    try:
        peft_model.train()
        pad_id = base.tokenizer.pad_token_id if base.tokenizer.pad_token_id is not None else 0
        batch = training.pad([data.sft_sequence(base.tokenizer, EXAMPLE, "all")], pad_id, peft_model.device)
        logits = peft_model(input_ids=batch["inputs"], attention_mask=batch["attention"]).logits
        losses.sft_loss(logits, batch["targets"], batch["mask"]).backward()
        parameters = optimizer_state.trainable(peft_model)
        return {n: p.detach().clone() for n, p in parameters}, {n: p.grad.clone() for n, p in parameters}
    finally:
        base.release(peft_model)


def test_the_second_of_two_one_step_jobs_continues_the_first_ones_adam_moments(base):
    memory = optimizer_state.Memory()
    first = sft_job(LR1)
    assert run(first, base, memory)["optimizer"] == "fresh"
    second = sft_job(LR2, base_files=first.uploads, base_step=1)
    started = run(second, base, memory)
    assert started["optimizer"] == "continued" and started["optimizer_step"] == 1
    assert started["optimizer_from"] == "memory"
    assert second.downloads == list(models.ADAPTER_FILES), "the state in memory is not downloaded again"
    assert [d["learning_rate"] for t, d in second.events if t == "gradient_step"] == [LR2]

    w0, g1 = start_and_gradient(base, None)
    w1, g2 = start_and_gradient(base, first.uploads)
    assert w1.keys() == adapter(second.uploads).keys()
    after_first, after_second = adapter(first.uploads), adapter(second.uploads)
    largest_difference = 0.0
    for name in w0:
        # the first job is Adam's first step: about the learning rate, in the gradient's sign
        torch.testing.assert_close(after_first[name] - w0[name], -LR1 * g1[name] / (g1[name].abs() + EPS))
        # the second is Adam's second step, with the first gradient in its moments and the second job's rate
        m = B1 * (1 - B1) * g1[name] + (1 - B1) * g2[name]
        v = B2 * (1 - B2) * g1[name] ** 2 + (1 - B2) * g2[name] ** 2
        continued = -LR2 * (m / (1 - B1**2)) / ((v / (1 - B2**2)).sqrt() + EPS)
        fresh = -LR2 * g2[name] / (g2[name].abs() + EPS)
        change = after_second[name] - w1[name]
        torch.testing.assert_close(change, continued, rtol=1e-4, atol=LR2 * 1e-4)
        largest_difference = max(largest_difference, float((change - fresh).abs().max()))
        if "lora_A" in name:
            # a new adapter's B is zero, so A had no gradient in the first job: moments of the second gradient
            # alone, whose bias-corrected step is sqrt(1 + b2) / (1 + b1) of a fresh optimizer's (0.744)
            assert float(g1[name].abs().max()) == 0.0
            clear = g2[name].abs() > 1e-4  # where eps (1e-8) changes neither step by more than 1e-4 of itself
            assert int(clear.sum()) > clear.numel() // 2
            torch.testing.assert_close(
                change[clear], fresh[clear] * math.sqrt(1 + B2) / (1 + B1), rtol=1e-3, atol=LR2 * 1e-4
            )
    assert largest_difference > 0.2 * LR2, "a fresh optimizer would have made the same step"


def test_a_restarted_worker_continues_from_the_checkpoints_file_as_the_one_that_kept_it(base):
    memory = optimizer_state.Memory()
    first = sft_job(LR1)
    run(first, base, memory)
    kept = sft_job(LR2, base_files=first.uploads, base_step=1)
    run(kept, base, memory)
    restarted = sft_job(LR2, base_files=first.uploads, base_step=1)
    started = run(restarted, base, optimizer_state.Memory())
    assert started["optimizer"] == "continued" and started["optimizer_step"] == 1
    assert started["optimizer_from"] == "checkpoint" and optimizer_state.FILE in restarted.downloads
    for name, weight in adapter(kept.uploads).items():
        assert torch.equal(weight, adapter(restarted.uploads)[name]), name
    # the file written after the second step holds two steps of moments, equal to those kept in memory
    written = optimizer_state.read(restarted.uploads[optimizer_state.FILE])
    for name, moments in optimizer_state.read(kept.uploads[optimizer_state.FILE])["state"].items():
        assert float(written["state"][name]["step"]) == 2.0
        for key in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(moments[key], written["state"][name][key]), (name, key)
    third = sft_job(LR2, base_files=restarted.uploads, base_step=2)
    assert run(third, base, optimizer_state.Memory())["optimizer_step"] == 2


def test_memory_serves_only_the_model_and_checkpoint_it_was_kept_for(base):
    memory = optimizer_state.Memory()
    first = sft_job(LR1)
    run(first, base, memory)
    other_model = sft_job(LR2, base_files=first.uploads, base_step=1, model_id="another")
    assert run(other_model, base, memory)["optimizer_from"] == "checkpoint"
    # memory now holds the state of other_model's checkpoint; first's checkpoint is read from its file again
    again = sft_job(LR2, base_files=first.uploads, base_step=1)
    assert run(again, base, memory)["optimizer_from"] == "checkpoint"
    # and a failed job does not leave the moments it changed in memory
    continued = sft_job(LR2, base_files=again.uploads, base_step=2)
    continued.job_input = {**continued.job_input, "examples": [{"messages": [{"role": "user", "content": "x"}]}]}
    assert runner.run_job(continued, base, LORA, memory) == "failed"
    retry = sft_job(LR2, base_files=again.uploads, base_step=2)
    assert run(retry, base, memory)["optimizer_from"] == "checkpoint"


def test_rl_jobs_carry_their_moments_too(base):
    memory = optimizer_state.Memory()
    first = rl_job()
    assert run(first, base, memory)["optimizer"] == "fresh"
    second = rl_job(base_files=first.uploads, base_step=1)
    started = run(second, base, memory)
    assert (started["optimizer"], started["optimizer_step"], started["optimizer_from"]) == ("continued", 1, "memory")


class NotAState:
    pass


def replaced(stored, **changes):
    """The file of a stored state with some of its entries changed."""
    buffer = io.BytesIO()
    torch.save({**stored, **changes}, buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def checkpoint(base):
    """The files of a checkpoint made by one job, and the optimizer state it stored."""
    job = sft_job(LR1)
    run(job, base, optimizer_state.Memory())
    return job.uploads, optimizer_state.read(job.uploads[optimizer_state.FILE])


@pytest.mark.parametrize(
    "change, reason",
    [
        ("absent", "checkpoint step 1 has no optimizer state (optimizer.pt)"),
        ("garbage", "optimizer.pt holds more than tensors, numbers and names, or is no torch file"),
        ("truncated", "optimizer.pt cannot be read (RuntimeError: PytorchStreamReader failed reading zip archive"),
        ("code", "optimizer.pt holds more than tensors, numbers and names, or is no torch file"),
        ("format", "optimizer.pt is of format 'someone else 2', not 'fulcrum-worker adamw 1'"),
        ("betas", "optimizer.pt was made with AdamW settings {'betas': (0.8, 0.99)"),
        ("rank", "optimizer.pt is for other trainable parameters (28 there, 28 here; base_model.model.model.layers"),
        ("moment", "optimizer.pt: exp_avg of base_model.model.model.layers.0.self_attn.q_proj.lora_A"),
        ("no moments", "optimizer.pt has no moments yet: the job that wrote it took no gradient step"),
    ],
)
def test_a_checkpoint_without_a_state_this_job_can_continue_starts_fresh_and_says_why(base, checkpoint, change, reason):
    files, state = checkpoint
    files = dict(files)
    first_a = next(n for n in state["state"] if "lora_A" in n)
    if change == "absent":
        del files[optimizer_state.FILE]
    elif change == "garbage":
        files[optimizer_state.FILE] = b"not a torch file"
    elif change == "truncated":
        files[optimizer_state.FILE] = files[optimizer_state.FILE][:100]
    elif change == "code":
        files[optimizer_state.FILE] = replaced(state, state=NotAState())
    elif change == "format":
        files[optimizer_state.FILE] = replaced(state, format="someone else 2")
    elif change == "betas":
        files[optimizer_state.FILE] = replaced(
            state, hyperparameters={**state["hyperparameters"], "betas": [0.8, 0.99]}
        )
    elif change == "rank":  # made for an adapter of rank 8: every A and B has other shapes
        parameters = {n: [8, s[1]] if "lora_A" in n else [s[0], 8] for n, s in state["parameters"].items()}
        files[optimizer_state.FILE] = replaced(state, parameters=parameters)
    elif change == "moment":
        moments = {**state["state"][first_a], "exp_avg": torch.zeros(3)}
        files[optimizer_state.FILE] = replaced(state, state={**state["state"], first_a: moments})
    elif change == "no moments":
        files[optimizer_state.FILE] = replaced(state, state={})
    job = sft_job(LR2, base_files=files, base_step=1)
    started = run(job, base, optimizer_state.Memory())
    assert started["optimizer"] == "fresh", started
    assert started["optimizer_reason"].startswith(reason), started["optimizer_reason"]
    assert (optimizer_state.FILE in job.downloads) == (change != "absent")
    # the fresh optimizer took the job's one step: the checkpoint it writes holds one step of moments
    written = optimizer_state.read(job.uploads[optimizer_state.FILE])
    assert {float(m["step"]) for m in written["state"].values()} == {1.0}
