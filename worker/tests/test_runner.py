"""The job lifecycle of `runner.run_job` against a fake job (the calls a server would answer)."""

import hashlib

import pytest
from safetensors.torch import load

from fulcrum_worker import model as models
from fulcrum_worker import optimizer_state, protocol, runner, training


class FakeJob:
    """A claimed job of model `model_id` starting from checkpoint `base_step` whose files are `base_files` (path to
    content; none: step 0, the base model's `checkpoint.json`), as the server would answer its calls."""

    def __init__(self, kind, job_input, cancel_after=None, lost_after=None, base_files=None, base_step=0, model_id="m"):
        files = base_files if base_files is not None else {"checkpoint.json": b'{"adapter": null}'}
        refs = [
            protocol.FileRef(path, len(content), hashlib.sha256(content).hexdigest()) for path, content in files.items()
        ]
        self.claim = protocol.Claim("job_1", kind, 1, "token", 30, {"id": model_id}, base_step, refs)
        self.base_files = files
        self.job_input = job_input
        self.cancel_after = cancel_after
        self.lost_after = lost_after
        self.cancel_requested = False
        self.events, self.uploads, self.calls, self.downloads = [], {}, [], []

    def input(self):
        return self.job_input

    def base_checkpoint_file(self, path):
        self.downloads.append(path)
        return self.base_files[path]

    def event(self, type_, data):
        self.events.append((type_, data))
        steps = sum(1 for t, _ in self.events if t == "gradient_step")
        if self.lost_after is not None and steps >= self.lost_after:
            raise protocol.LeaseLost("POST", "/events", 409, "lease lost")
        self.cancel_requested = self.cancel_after is not None and steps >= self.cancel_after
        return self.cancel_requested

    def heartbeat(self):
        return self.cancel_requested

    def upload(self, path, content):
        self.uploads[path] = content
        return {"path": path, "size": len(content), "digest": hashlib.sha256(content).hexdigest()}

    def finish(self, metrics):
        self.calls.append(("finish", metrics))

    def fail(self, message):
        self.calls.append(("fail", message))


@pytest.fixture(scope="module")
def base(tiny_model_dir):
    return models.BaseModel("tiny", str(tiny_model_dir))


def sft_input(epochs=1, **config):
    pairs = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome")]
    examples = [
        {"messages": [{"role": "user", "content": f"Capital of {c}?"}, {"role": "assistant", "content": a}]}
        for c, a in pairs
    ]
    return {"kind": "sft", "config": {"batch_size": 2, "epochs": epochs, **config}, "examples": examples}


def test_a_job_posts_its_events_uploads_the_adapter_and_finishes(base):
    job = FakeJob("sft", sft_input(epochs=2, kl_penalty_coef=0.1))
    assert runner.run_job(job, base, models.LoraSettings(rank=4, alpha=8), optimizer_state.Memory()) == "succeeded"
    types = [t for t, _ in job.events]
    assert types == ["training_started"] + ["gradient_step"] * 4
    assert job.events[0][1]["num_sequences"] == 4
    assert job.events[0][1]["not_implemented"] == ["kl_penalty_coef"]
    assert job.events[0][1]["optimizer"] == "fresh"
    assert job.events[0][1]["optimizer_reason"] == "checkpoint step 0 is the base model: no adapter yet"
    assert set(job.uploads) == {"adapter_config.json", "adapter_model.safetensors", "optimizer.pt"}
    weights = load(job.uploads["adapter_model.safetensors"])
    assert weights and all("lora_" in name for name in weights)
    assert job.calls[0][0] == "finish" and "loss" in job.calls[0][1]


def test_a_cancel_stops_at_the_next_step_without_a_checkpoint(base):
    job = FakeJob("sft", sft_input(epochs=5), cancel_after=2)
    assert runner.run_job(job, base, models.LoraSettings(), optimizer_state.Memory()) == "cancelled"
    assert sum(1 for t, _ in job.events if t == "gradient_step") == 2
    assert job.uploads == {}
    assert job.calls == [("fail", "Cancelled")]


def test_a_lost_lease_drops_the_job_without_another_call(base):
    job = FakeJob("sft", sft_input(epochs=5), lost_after=1)
    assert runner.run_job(job, base, models.LoraSettings(), optimizer_state.Memory()) == "dropped"
    assert job.uploads == {} and job.calls == []


def test_a_job_that_cannot_train_fails_with_the_reason(base):
    job = FakeJob("sft", {"kind": "sft", "config": {}, "examples": [{"messages": [{"role": "user", "content": "x"}]}]})
    assert runner.run_job(job, base, models.LoraSettings(), optimizer_state.Memory()) == "failed"
    assert job.calls[0][0] == "fail" and "no example has an assistant turn" in job.calls[0][1]


def test_a_failure_the_server_cannot_record_leaves_the_worker_running(base):
    class Unrecorded(FakeJob):
        def fail(self, message):
            self.calls.append(("fail", message))
            raise protocol.ProtocolError("POST", "/fail", 507, "Insufficient Storage")

    job = Unrecorded(
        "sft", {"kind": "sft", "config": {}, "examples": [{"messages": [{"role": "user", "content": "x"}]}]}
    )
    # the job's lease runs out on the server, which queues it again or fails it; the worker claims the next
    assert runner.run_job(job, base, models.LoraSettings(), optimizer_state.Memory()) == "failed"
    assert job.calls[0][0] == "fail"


def test_rl_reports_rewards_and_where_behaviour_logprobs_came_from(base):
    def trajectory(answer, reward):
        return {
            "messages_and_choices": [
                {"role": "user", "content": "Say 7"},
                {"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": answer}},
            ],
            "reward": reward,
        }

    groups = [{"trajectories": [trajectory("7", 1), trajectory("no", 0), trajectory("77", 1), trajectory("x", 0)]}]
    config = {"loss_fn": "ppo", "importance_sampling_level": "sequence", "learning_rate": [1e-3, 5e-4]}
    job = FakeJob("rl", {"kind": "rl", "config": {**config, "batch_size": 2}, "trajectory_groups": groups})
    assert runner.run_job(job, base, models.LoraSettings(), optimizer_state.Memory()) == "succeeded"
    started = job.events[0][1]
    assert started["num_sequences"] == 2 and started["behaviour_logprobs_recomputed"] == 4
    steps = [data for t, data in job.events if t == "gradient_step"]
    assert [s["learning_rate"] for s in steps] == [1e-3, 5e-4]
    assert steps[0]["reward"] == 0.5 and steps[0]["reward_std_dev"] == 0.5
    # on the first step the policy is the behaviour policy: every ratio is 1
    assert steps[0]["ratio_mean"] == pytest.approx(1.0, abs=1e-5)


def test_rl_balances_advantages_penalises_kl_and_can_recompute_every_behaviour_logprob(base):
    def trajectory(answer, reward):
        # logprobs as a sampler reports them: precalculate_logprobs replaces them with the starting weights' own
        choice = {"role": "assistant", "content": answer}
        logprobs = {"content": [{"token": answer, "logprob": -0.5, "bytes": list(answer.encode()), "top_logprobs": []}]}
        return {
            "messages_and_choices": [
                {"role": "user", "content": "Say 7"},
                {"finish_reason": "stop", "index": 0, "message": choice, "logprobs": logprobs},
            ],
            "reward": reward,
        }

    groups = [{"trajectories": [trajectory("7", 1), trajectory("no", 0), trajectory("77", 1), trajectory("x", 0)]}]
    config = {"advantage_balance": 1.0, "beta": 0.5, "precalculate_logprobs": True, "normalize_advantages": True}
    config |= {"batch_size": 1, "epochs": 1}
    job = FakeJob("rl", {"kind": "rl", "config": config, "trajectory_groups": groups})
    assert runner.run_job(job, base, models.LoraSettings(), optimizer_state.Memory()) == "succeeded"
    started = job.events[0][1]
    # balance 1: the two negative advantages weigh nothing, so only the two rewarded answers are trained
    assert started["num_sequences"] == 2 and started["not_implemented"] == []
    assert started["behaviour_logprobs_recomputed"] == 2 and started["behaviour_logprobs_from_trajectories"] == 0
    steps = [data for t, data in job.events if t == "gradient_step"]
    # a new adapter starts equal to the base model (LoRA's B is zero): no divergence yet, and none below zero after
    assert steps[0]["kl_div"] == pytest.approx(0.0, abs=1e-6)
    assert steps[0]["ratio_mean"] == pytest.approx(1.0, abs=1e-5)
    assert all(s["kl_div"] >= 0 for s in steps)


def test_an_advantage_balance_outside_minus_one_to_one_fails_the_job(base):
    groups = [
        {
            "trajectories": [
                {
                    "messages_and_choices": [
                        {"role": "user", "content": "x"},
                        {"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": "y"}},
                    ],
                    "reward": r,
                }
                for r in (0, 1)
            ]
        }
    ]
    job = FakeJob("rl", {"kind": "rl", "config": {"advantage_balance": 2}, "trajectory_groups": groups})
    assert runner.run_job(job, base, models.LoraSettings(), optimizer_state.Memory()) == "failed"
    assert "advantage_balance must be between -1 and 1" in job.calls[0][1]


def test_sft_epochs_default_to_three_passes_unless_the_learning_rate_is_per_batch():
    assert training.Settings.of({"learning_rate": 1e-3}, "sft")[0].epochs == 3
    # ART's train_sft_from_file sends one rate per batch over the epochs it unrolled itself: one pass over its data
    assert training.Settings.of({"learning_rate": [1e-3, 5e-4, 1e-4]}, "sft")[0].epochs == 1
    assert training.Settings.of({"learning_rate": [1e-3], "epochs": 2}, "sft")[0].epochs == 2
    assert training.Settings.of({}, "rl")[0].epochs == 1
