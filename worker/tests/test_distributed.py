"""One job over two processes (`torchrun --nproc_per_node 2`, gloo on CPU) against a fake server: the adapter and the
optimizer state it trains equal the one-process run of the same job; a cancel stops both ranks at the same step and
the worker goes on; a killed rank fails the job with a clear message."""

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from fake_server import FakeServer, QueuedJob
from safetensors.torch import load
from test_runner import FakeJob

import fulcrum_worker
from fulcrum_worker import distributed, optimizer_state, runner
from fulcrum_worker import model as models

LORA = models.LoraSettings(rank=4, alpha=8)
SRC = str(Path(fulcrum_worker.__file__).parent.parent)


def sft_input(epochs=2, batch_size=3, **config):
    pairs = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Spain", "Madrid")]
    examples = [
        {"messages": [{"role": "user", "content": f"Capital of {c}?"}, {"role": "assistant", "content": a}]}
        for c, a in pairs
    ]
    # no clipping: Adam's steps hardly depend on the gradients' scale, its moments do
    config = {"batch_size": batch_size, "epochs": epochs, "learning_rate": 1e-2, "max_grad_norm": 1e9, **config}
    return {"kind": "sft", "config": config, "examples": examples}


def rl_input():
    def trajectory(answer, reward):
        choice = {"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": answer}}
        return {"messages_and_choices": [{"role": "user", "content": "Say 7"}, choice], "reward": reward}

    groups = [
        {"trajectories": [trajectory("7", 1), trajectory("no", 0), trajectory("77", 0.5)]},
        {"trajectories": [trajectory("seven", 1), trajectory("x", 0), trajectory("8", 0.2)]},
    ]
    # 6 sequences, batch 4: a step of 4 (2 per rank) and one of 2 (1 per rank); KL to the base too; clipped. Adam's
    # first steps move a weight by about the learning rate whatever its gradient's size, also one of 1e-9 whose
    # rounding differs between one process and two: at 1e-3 such a weight differs by less than the test's 1e-5
    config = {"learning_rate": 1e-3, "batch_size": 4, "beta": 0.1, "loss_fn": "ppo"}
    return {"kind": "rl", "config": config, "trajectory_groups": groups}


def torchrun(server, model_dir, max_jobs, *extra, nproc=2):
    """`torchrun --standalone --nproc_per_node 2 -m fulcrum_worker run ...` against the fake server, started."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    command += ["-m", "fulcrum_worker", "run", "--server", server.url, "--api-key", "k", "--base-model", "tiny"]
    command += ["--model-path", str(model_dir), "--lora-rank", "4", "--lora-alpha", "8", "--threads", "1"]
    command += ["--wait", "1", "--max-jobs", str(max_jobs), "--deterministic", "--dist-timeout", "60", *extra]
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def one_process(base, kind, job_input):
    """The same job in this process (one rank), as the reference."""
    job = FakeJob(kind, job_input)
    torch.use_deterministic_algorithms(True)
    try:
        assert runner.run_job(job, base, LORA, optimizer_state.Memory()) == "succeeded", job.calls
    finally:
        torch.use_deterministic_algorithms(False)
    return job


def continued_in_one_process(base, first):
    """The one-process job that continues `first`'s checkpoint (its moments read from the checkpoint's file)."""
    job = FakeJob("sft", sft_input(epochs=1), base_files=dict(first.uploads), base_step=4)
    torch.use_deterministic_algorithms(True)
    try:
        assert runner.run_job(job, base, LORA, optimizer_state.Memory()) == "succeeded", job.calls
    finally:
        torch.use_deterministic_algorithms(False)
    assert job.events[0][1]["optimizer_from"] == "checkpoint"
    return job


def assert_same_training(two, one):
    state = torch.load(io.BytesIO(two.uploads["optimizer.pt"]), weights_only=True)["state"]
    reference = torch.load(io.BytesIO(one.uploads["optimizer.pt"]), weights_only=True)["state"]
    assert state.keys() == reference.keys()
    for name, moments in reference.items():
        assert float(state[name]["step"]) == float(moments["step"])
        torch.testing.assert_close(state[name]["exp_avg"], moments["exp_avg"], rtol=1e-4, atol=1e-7)
        torch.testing.assert_close(state[name]["exp_avg_sq"], moments["exp_avg_sq"], rtol=1e-4, atol=1e-10)
    weights, expected = load(two.uploads["adapter_model.safetensors"]), load(one.uploads["adapter_model.safetensors"])
    assert weights.keys() == expected.keys()
    for name, value in expected.items():
        torch.testing.assert_close(weights[name], value, rtol=0, atol=1e-5)
    # B starts at zero: how far it went is what the job trained
    assert max(float(v.abs().max()) for n, v in expected.items() if ".lora_B." in n) > 1e-3, "the job trained nothing"
    one_steps = [data for t, data in one.events if t == "gradient_step"]
    assert len(two.steps) == len(one_steps)
    for mine, theirs in zip(two.steps, one_steps, strict=True):
        for key in ("loss", "grad_norm", "num_trainable_tokens"):
            assert mine[key] == pytest.approx(theirs[key], rel=1e-5, abs=1e-7), key


@pytest.fixture(scope="module")
def base(tiny_model_dir):
    return models.BaseModel("tiny", str(tiny_model_dir))


def test_two_processes_train_what_one_trains_continue_their_moments_and_a_cancel_stops_both_ranks(base, tiny_model_dir):
    with FakeServer() as server:
        cancelled = server.add(QueuedJob("sft", sft_input(epochs=20, batch_size=2), cancel_after=2))
        sft = server.add(QueuedJob("sft", sft_input()))
        process = torchrun(server, tiny_model_dir, 4)
        assert sft.ended.wait(180), process.kill() or process.communicate()[0]
        # the next job continues the SFT job's checkpoint: every rank continues the Adam moments it kept in memory
        continued = server.add(QueuedJob("sft", sft_input(epochs=1), base_files=dict(sft.uploads), base_step=4))
        rl = server.add(QueuedJob("rl", rl_input()))
        output, _ = process.communicate(timeout=240)
        assert process.returncode == 0, output
    # the cancel: both ranks stopped at step 2, the job failed as cancelled, and the worker went on to the next jobs
    assert len(cancelled.steps) == 2 and cancelled.failed == "Cancelled" and cancelled.uploads == {}
    assert "job job_1 stopped on rank 1" in output
    started = sft.events[0][1]
    assert started["mode"] == "ddp" and started["world_size"] == 2
    assert all(s["world_size"] == 2 and s["tokens_per_second_per_rank"] > 0 for s in sft.steps)
    assert sft.failed is None and rl.failed is None, output
    # every step's batch over the ranks: SFT 4 examples in batches of 3 (2 + 1 sequences, then 1 + none), 2 epochs
    assert [s["num_sequences"] for s in sft.steps] == [3, 1, 3, 1]
    one = one_process(base, "sft", sft_input())
    assert_same_training(sft, one)
    assert_same_training(rl, one_process(base, "rl", rl_input()))
    assert continued.events[0][1]["optimizer_from"] == "memory" and continued.events[0][1]["optimizer_step"] == 4
    assert_same_training(continued, continued_in_one_process(base, one))


def rank_process(launcher: subprocess.Popen, rank: int) -> int:
    """The process id of one rank: a child of torchrun's agent whose environment says RANK=rank."""
    children = Path(f"/proc/{launcher.pid}/task/{launcher.pid}/children").read_text().split()
    for pid in children:
        environ = b"\0" + Path(f"/proc/{pid}/environ").read_bytes()
        if f"\0RANK={rank}\0".encode() in environ:
            return int(pid)
    raise AssertionError(f"no rank {rank} among {children}")


def test_a_killed_rank_fails_the_job_with_a_clear_message_and_the_worker_exits(tiny_model_dir):
    with FakeServer() as server:
        job = server.add(QueuedJob("sft", sft_input(epochs=1000, batch_size=2)))
        process = torchrun(server, tiny_model_dir, 2)
        deadline = time.monotonic() + 180
        while len(job.steps) < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(job.steps) >= 2, process.communicate(timeout=60)[0]
        os.kill(rank_process(process, 1), signal.SIGKILL)
        output, _ = process.communicate(timeout=120)
        assert job.ended.is_set(), output
    assert process.returncode != 0
    assert job.failed is not None and job.finished is None and job.uploads == {}
    assert job.failed.startswith("fulcrum-worker: ")
    assert "another rank of the process group exited" in job.failed or "process group broke" in job.failed


def test_torchruns_sigterm_after_a_collective_broke_does_not_cut_the_failure_report_short():
    """torchrun stops the other ranks with SIGTERM as soon as one exits; rank 0, reporting the failure its broken
    collective raised, must finish that report (the SIGTERM came while it posted `/fail` in CI)."""
    previous = signal.signal(signal.SIGTERM, distributed._stopped_by_launcher)
    try:
        distributed._broken.clear()
        with pytest.raises(distributed.GroupBroken, match="broke in broken_collective"):
            distributed._collective(broken_collective)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler ran here, and raised nothing
        distributed._broken.clear()
        with pytest.raises(distributed.GroupBroken, match="stopped by SIGTERM"):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)  # only the first one raises
        time.sleep(0.05)
    finally:
        signal.signal(signal.SIGTERM, previous)
        distributed._broken.clear()


def broken_collective():
    raise RuntimeError("Connection reset by peer")


def test_micro_batches_accumulate_to_the_step_of_the_whole_batch(base):
    whole = one_process(base, "sft", sft_input())
    job = FakeJob("sft", sft_input())
    torch.use_deterministic_algorithms(True)
    try:
        memory = optimizer_state.Memory()
        assert runner.run_job(job, base, LORA, memory, micro_batch=1) == "succeeded", job.calls
    finally:
        torch.use_deterministic_algorithms(False)
    job.steps = [data for t, data in job.events if t == "gradient_step"]
    assert_same_training(job, whole)


def _agree(rank: int, init: str, results) -> None:
    from fulcrum_worker import distributed

    torch.distributed.init_process_group("gloo", init_method=init, rank=rank, world_size=2)
    group = distributed.Group(rank, 2, rank, "ddp")
    outcome = []
    for failing in (None, 1, 0):
        try:
            with group.agreement():
                if rank == failing:
                    raise ValueError(f"bad data on rank {rank}")
            outcome.append("went on")
        except distributed.RankFailed as error:
            outcome.append(f"RankFailed: {error}")
        except distributed.Stopped:
            outcome.append("Stopped")
        except ValueError as error:
            outcome.append(f"ValueError: {error}")
    torch.distributed.destroy_process_group()
    results.put((rank, outcome))


def test_a_failure_on_any_rank_stops_every_rank_and_rank_0_names_it(tmp_path):
    context = torch.multiprocessing.get_context("spawn")
    results = context.Queue()
    init = f"file://{tmp_path}/rendezvous"
    processes = [context.Process(target=_agree, args=(rank, init, results)) for rank in (0, 1)]
    for process in processes:
        process.start()
    outcomes = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(timeout=60)
    # nothing failed: both go on; rank 1 failed: rank 0 raises its error by name, rank 1 stops; rank 0 failed: its own
    assert outcomes[0] == [
        "went on",
        "RankFailed: rank 1 of 2: ValueError: bad data on rank 1",
        "ValueError: bad data on rank 0",
    ]
    assert outcomes[1] == ["went on", "Stopped", "Stopped"]


def test_sharded_over_two_processes_fsdp_trains_what_one_trains_and_continues_its_optimizer(base, tiny_model_dir):
    with FakeServer() as server:
        sft = server.add(QueuedJob("sft", sft_input()))
        process = torchrun(server, tiny_model_dir, 3, "--shard")
        assert sft.ended.wait(180), process.kill() or process.communicate()[0]
        # the next job continues the first one's checkpoint: its adapter, and its Adam moments (held by rank 0)
        continued = server.add(QueuedJob("sft", sft_input(epochs=1), base_files=dict(sft.uploads), base_step=4))
        rl = server.add(QueuedJob("rl", rl_input()))
        output, _ = process.communicate(timeout=240)
        assert process.returncode == 0, output
    assert sft.events[0][1]["mode"] == "fsdp" and sft.events[0][1]["world_size"] == 2
    assert continued.events[0][1]["optimizer"] == "continued", continued.events[0][1]
    assert continued.events[0][1]["optimizer_from"] == "memory" and continued.events[0][1]["optimizer_step"] == 4
    one = one_process(base, "sft", sft_input())
    assert_same_training(sft, one)
    assert_same_training(rl, one_process(base, "rl", rl_input()))
    assert_same_training(continued, continued_in_one_process(base, one))
