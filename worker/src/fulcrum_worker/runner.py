"""The worker's loop: register, claim, run each job through the protocol, and drop a job whose lease was lost."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import requests
import torch

from . import distributed, optimizer_state, protocol, sharded, tinker_desk, training
from . import model as models

log = logging.getLogger("fulcrum_worker")


def run_job(
    job: protocol.Job,
    base: models.BaseModel,
    lora: models.LoraSettings,
    memory: optimizer_state.Memory,
    group: distributed.Group | None = None,
    micro_batch: int | None = None,
) -> str:
    """Runs one claimed job to its end: `succeeded`, `failed`, `cancelled` or `dropped` (lease lost). `memory` holds
    the optimizer state of the checkpoint this worker made last. On rank 0 of a group: the other ranks train it too
    (`follow`). A broken group (`distributed.GroupBroken`) fails the job and is raised: the worker must exit."""
    group = group or distributed.Group()
    claim = job.claim
    with protocol.Heartbeat(job, max(claim.lease_seconds / 3, 0.5), f"heartbeat-{claim.job_id}") as heartbeat:
        try:
            outcome = _train_and_upload(job, base, lora, memory, heartbeat, group, micro_batch)
        except protocol.LeaseLost as lost:
            log.warning("job %s: lease lost (%s); dropped", claim.job_id, lost)
            return "dropped"
        except training.Cancelled:
            _quietly(job.fail, "Cancelled")
            return "cancelled"
        except distributed.GroupBroken as broken:
            log.error("job %s: %s", claim.job_id, broken)
            _quietly(job.fail, f"fulcrum-worker: {broken}")
            raise
        except Exception as error:  # the job fails with the reason; the worker goes on
            log.exception("job %s failed", claim.job_id)
            _quietly(job.fail, f"fulcrum-worker: {type(error).__name__}: {error}")
            return "failed"
    return outcome


def _quietly(call, *args) -> None:
    """Reports a job's end; a report that does not get through is logged, and the worker goes on to its next claim
    (the job's lease runs out and the server queues it again or fails it)."""
    try:
        call(*args)
    except protocol.LeaseLost:
        log.warning("job: lease lost before the end was reported")
    except (requests.RequestException, protocol.ProtocolError) as error:
        log.warning("job: its end could not be reported (%s)", error)


def _has_adapter(claim: protocol.Claim) -> bool:
    return set(models.ADAPTER_FILES) <= {f.path for f in claim.base_files}


# download(path): a file of the checkpoint the job starts from (from the server on rank 0; as rank 0 passed it on, on
# the other ranks).
Download = Callable[[str], bytes]


def _carried(claim: protocol.Claim, memory: optimizer_state.Memory, download: Download) -> optimizer_state.Found:
    """The optimizer state of the checkpoint the job starts from: the one this worker kept, when it made exactly that
    checkpoint, else the checkpoint's own file (downloaded only then); or why the job starts fresh."""
    if not _has_adapter(claim):
        return optimizer_state.Found.none(f"checkpoint step {claim.base_step} is the base model: no adapter yet")
    files = {f.path: f.digest for f in claim.base_files}
    if optimizer_state.FILE not in files:
        return optimizer_state.Found.none(
            f"checkpoint step {claim.base_step} has no optimizer state ({optimizer_state.FILE})"
        )
    kept = memory.take(claim.model["id"], files)
    if kept is not None:
        return optimizer_state.Found(kept, "memory")
    try:
        return optimizer_state.Found(optimizer_state.read(download(optimizer_state.FILE)), "checkpoint")
    except optimizer_state.Unusable as unusable:
        return optimizer_state.Found.none(str(unusable))


@contextlib.contextmanager
def _adapter(
    claim: protocol.Claim, download: Download, base: models.BaseModel, lora: models.LoraSettings, seed: int, group
) -> Iterator[Any]:
    """The base model wrapped in the job's adapter (the checkpoint's, or a new one), the same on every rank; unwrapped
    again at the end."""
    peft_model = None
    try:
        with group.agreement(), tempfile.TemporaryDirectory(prefix="fulcrum-base-") as directory:
            adapter_dir = None
            if _has_adapter(claim):
                # the files training reads; the checkpoint's others (its GGUF, its optimizer state) are not fetched here
                for path in models.ADAPTER_FILES:
                    Path(directory, path).write_bytes(download(path))
                adapter_dir = directory
            peft_model = base.with_adapter(adapter_dir, lora, seed)
        if group.mode == "ddp":
            distributed.same_weights(peft_model, group)
        yield peft_model
    finally:
        if peft_model is not None:
            base.release(peft_model)


def _train(
    claim: protocol.Claim,
    job_input: dict[str, Any],
    download: Download,
    base: models.BaseModel,
    lora: models.LoraSettings,
    memory: optimizer_state.Memory,
    report: training.Report,
    group: distributed.Group,
    micro_batch: int | None,
    end: Callable[[Any, torch.optim.Optimizer, dict[str, float]], None],
) -> None:
    """What every rank does with a job: wrap the base in its adapter, continue or start the optimizer, train; then
    `end(peft_model, optimizer, metrics)`, before the adapter is unwrapped."""
    with group.agreement():  # a config no rank can train with stops them all here
        settings, ignored = training.Settings.of(job_input.get("config"), claim.kind)
        settings.rate(0)
    with _adapter(claim, download, base, lora, settings.seed, group) as peft_model:
        if group.mode == "fsdp":
            # rank 0 alone keeps the whole state between jobs; it passes on what it found, each rank loads its shard
            found = group.broadcast(_carried(claim, memory, download) if group.main else None)
            optimizer, continued = sharded.start_optimizer(peft_model, settings.rate(0), found)
        else:
            with group.agreement():
                optimizer, continued = optimizer_state.start(
                    peft_model, settings.rate(0), _carried(claim, memory, download)
                )
        started = {
            "base_step": claim.base_step,
            "device": str(base.device),
            "not_implemented": ignored,
            **continued,
        }
        if claim.kind == "sft":
            train, items = training.train_sft, job_input.get("examples") or []
        else:
            train, items = training.train_rl, job_input.get("trajectory_groups") or []
        metrics = train(peft_model, base.tokenizer, items, settings, optimizer, report, started, group, micro_batch)
        end(peft_model, optimizer, metrics)


def _train_and_upload(
    job: protocol.Job,
    base: models.BaseModel,
    lora: models.LoraSettings,
    memory: optimizer_state.Memory,
    heartbeat,
    group: distributed.Group,
    micro_batch: int | None,
) -> str:
    claim = job.claim
    job_input = job.input()
    downloaded: dict[str, bytes] = {}

    def download(path: str) -> bytes:
        if path not in downloaded:
            downloaded[path] = job.base_checkpoint_file(path)
        return downloaded[path]

    if group.distributed:
        # what the other ranks need of the job: its input and the checkpoint files it starts from (the optimizer
        # state's only when rank 0 does not hold it in memory: then the other ranks do not either)
        for path in models.ADAPTER_FILES if _has_adapter(claim) else ():
            download(path)
        files = {f.path: f.digest for f in claim.base_files}
        if _has_adapter(claim) and optimizer_state.FILE in files and not memory.holds(claim.model["id"], files):
            download(optimizer_state.FILE)
        group.broadcast({"claim": claim, "input": job_input, "files": downloaded})
    calls = 0.0  # seconds spent in Fulcrum's event calls while training
    started_at = time.perf_counter()

    def report(type_: str, data: dict[str, Any]) -> bool:
        nonlocal calls
        if heartbeat.lost is not None:
            raise heartbeat.lost
        start = time.perf_counter()
        cancel = job.event(type_, data)
        calls += time.perf_counter() - start
        return cancel or job.cancel_requested

    def end(peft_model, optimizer: torch.optim.Optimizer, metrics: dict[str, float]) -> None:
        digests = None
        try:
            metrics = {
                **metrics,
                "training_seconds": time.perf_counter() - started_at,
                "fulcrum_call_seconds": calls,
            }
            if group.mode == "fsdp":
                files, state = sharded.gather(peft_model, optimizer, base.dtype)  # with every rank
            if job.cancel_requested or (heartbeat.lost is None and job.heartbeat()):
                raise training.Cancelled()
            if group.mode != "fsdp":
                files = models.save_adapter(peft_model, base.dtype)
                state = optimizer_state.state_of(peft_model, optimizer)
            if base.gguf is not None:
                files["adapter_model.gguf"] = models.gguf_adapter(files, base.gguf)
            files[optimizer_state.FILE] = optimizer_state.write(state)
            uploaded = {path: job.upload(path, content)["digest"] for path, content in files.items()}
            job.finish({k: float(v) for k, v in metrics.items()})
            memory.keep(claim.model["id"], uploaded, state)
            digests = uploaded
        finally:
            group.broadcast(digests)  # the other ranks keep their optimizer state for this checkpoint, or not

    _train(claim, job_input, download, base, lora, memory, report, group, micro_batch, end)
    log.info("job %s succeeded", claim.job_id)
    return "succeeded"


def follow(
    base: models.BaseModel,
    lora: models.LoraSettings,
    memory: optimizer_state.Memory,
    group: distributed.Group,
    micro_batch: int | None = None,
    sessions: tinker_desk.Sessions | None = None,
) -> int:
    """A rank other than 0: trains each job rank 0 passes on, and does its part of each Tinker operation, until rank 0
    says the worker stops. Answers the number of jobs it took part in."""
    ran = 0
    sessions = sessions or tinker_desk.Sessions(base, group)
    while True:
        package = group.broadcast()
        if package == STOP:
            return ran
        if package is None:
            continue  # rank 0's claim found no job (or it waits for its Tinker models' next operations)
        if "tinker" in package:
            try:
                sessions.apply(package)
            except distributed.Stopped:
                log.info("tinker model %s: %s stopped on rank %d", package["model"], package["tinker"], group.rank)
            continue
        claim: protocol.Claim = package["claim"]
        files: dict[str, bytes] = package["files"]
        ran += 1

        def download(path: str, files=files) -> bytes:
            if path not in files:
                raise RuntimeError(
                    f"rank 0 passed on no {path} (it holds the optimizer state in memory, this rank not)"
                )
            return files[path]

        def end(peft_model, optimizer: torch.optim.Optimizer, metrics: dict[str, float], claim=claim) -> None:
            if group.mode == "fsdp":
                sharded.gather(peft_model, optimizer, base.dtype)  # rank 0 keeps the whole state
                group.broadcast()
                return
            state = optimizer_state.state_of(peft_model, optimizer)
            digests = group.broadcast()
            if digests is not None:
                memory.keep(claim.model["id"], digests, state)

        try:
            _train(claim, package["input"], download, base, lora, memory, _no_report, group, micro_batch, end)
        except (distributed.Stopped, training.Cancelled):
            log.info("job %s stopped on rank %d", claim.job_id, group.rank)


def _no_report(type_: str, data: dict[str, Any]) -> bool:
    raise AssertionError("only rank 0 reports")


STOP = "stop"


def serve(
    server_url: str,
    api_key: str,
    base_model: str,
    model_path: str | None = None,
    name: str | None = None,
    lora: models.LoraSettings | None = None,
    max_jobs: int | None = None,
    wait: int = 20,
    gguf_cache: str | None = None,
    group: distributed.Group | None = None,
    micro_batch: int | None = None,
    max_tinker_models: int = 4,
) -> int:
    """Registers and runs jobs until `max_jobs` ran (forever without it); between jobs, holds up to
    `max_tinker_models` Tinker training clients at once (`tinker_desk`), and trains no job while it holds any. Answers
    the number of jobs run. In a process group, rank 0 registers, claims and passes each job and each Tinker operation
    on; the other ranks train it with rank 0 (`follow`)."""
    group = group or distributed.Group()
    lora = lora or models.LoraSettings()
    if group.mode == "fsdp":
        base = sharded.ShardedBase(base_model, model_path, gguf_cache, lora)
    else:
        base = models.BaseModel(base_model, model_path, gguf_cache)
    memory = optimizer_state.Memory()
    sessions = tinker_desk.Sessions(base, group)
    if not group.main:
        return follow(base, lora, memory, group, micro_batch, sessions)
    server = protocol.Server(server_url, api_key)
    name = name or f"{socket.gethostname()}-{os.getpid()}"
    worker = server.register(name, [base_model])
    log.info(
        "worker %s (%s) registered for %s on %s (%s, %d processes)",
        worker["id"],
        name,
        base_model,
        base.device,
        group.mode,
        group.world_size,
    )
    # FSDP shards the base over the ranks: no Tinker adapters there (docs/tinker.md)
    desk = tinker_desk.Desk(server, worker["id"], sessions, 0 if group.mode == "fsdp" else max_tinker_models)
    ran = 0
    while max_jobs is None or ran < max_jobs:
        # a waiting Tinker training client first (no wait: the job claim below is the long poll); while the worker
        # holds any, it serves them (and claims more while there is room) and trains no job
        if desk.claim(0):
            desk.serve()
            continue
        try:
            claim = server.claim(worker["id"], wait)
        except (requests.RequestException, protocol.ProtocolError) as error:
            if isinstance(error, protocol.ProtocolError) and error.status in (401, 403, 404):
                group.broadcast(STOP)
                raise
            log.warning("claim failed (%s); trying again", error)
            time.sleep(2)
            group.broadcast(None)
            continue
        if claim is None:
            group.broadcast(None)  # the other ranks wait in a collective, which must not wait past its timeout
            continue
        log.info("job %s (%s, attempt %d) claimed", claim.job_id, claim.kind, claim.attempt)
        outcome = run_job(server.job(claim), base, lora, memory, group, micro_batch)
        log.info("job %s: %s", claim.job_id, outcome)
        ran += 1
    group.broadcast(STOP)
    return ran
