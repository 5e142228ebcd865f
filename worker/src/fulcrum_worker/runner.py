"""The worker's loop: register, claim, run each job through the protocol, and drop a job whose lease was lost."""

from __future__ import annotations

import logging
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from . import model as models
from . import optimizer_state, protocol, training

log = logging.getLogger("fulcrum_worker")


def run_job(
    job: protocol.Job, base: models.BaseModel, lora: models.LoraSettings, memory: optimizer_state.Memory
) -> str:
    """Runs one claimed job to its end: `succeeded`, `failed`, `cancelled` or `dropped` (lease lost). `memory` holds
    the optimizer state of the checkpoint this worker made last."""
    claim = job.claim
    with protocol.Heartbeat(job, max(claim.lease_seconds / 3, 0.5)) as heartbeat:
        try:
            outcome = _train_and_upload(job, base, lora, memory, heartbeat)
        except protocol.LeaseLost as lost:
            log.warning("job %s: lease lost (%s); dropped", claim.job_id, lost)
            return "dropped"
        except training.Cancelled:
            _quietly(job.fail, "Cancelled")
            return "cancelled"
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


def _carried(job: protocol.Job, memory: optimizer_state.Memory) -> optimizer_state.Found:
    """The optimizer state of the checkpoint the job starts from: the one this worker kept, when it made exactly that
    checkpoint, else the checkpoint's own file (downloaded only then); or why the job starts fresh."""
    claim = job.claim
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
        return optimizer_state.Found(optimizer_state.read(job.base_checkpoint_file(optimizer_state.FILE)), "checkpoint")
    except optimizer_state.Unusable as unusable:
        return optimizer_state.Found.none(str(unusable))


def _train_and_upload(
    job: protocol.Job, base: models.BaseModel, lora: models.LoraSettings, memory: optimizer_state.Memory, heartbeat
) -> str:
    claim = job.claim
    job_input = job.input()
    settings, ignored = training.Settings.of(job_input.get("config"), claim.kind)
    with tempfile.TemporaryDirectory(prefix="fulcrum-base-") as directory:
        adapter_dir = None
        if _has_adapter(claim):
            # the files training reads; the checkpoint's others (its GGUF, its optimizer state) are not fetched here
            for path in models.ADAPTER_FILES:
                Path(directory, path).write_bytes(job.base_checkpoint_file(path))
            adapter_dir = directory
        peft_model = base.with_adapter(adapter_dir, lora, settings.seed)
    calls = 0.0  # seconds spent in Fulcrum's event calls while training
    try:

        def report(type_: str, data: dict[str, Any]) -> bool:
            nonlocal calls
            if heartbeat.lost is not None:
                raise heartbeat.lost
            start = time.perf_counter()
            cancel = job.event(type_, data)
            calls += time.perf_counter() - start
            return cancel or job.cancel_requested

        started_at = time.perf_counter()

        optimizer, continued = optimizer_state.start(peft_model, settings.rate(0), _carried(job, memory))
        started = {
            "base_step": claim.base_step,
            "device": str(base.device),
            "not_implemented": ignored,
            **continued,
        }
        if claim.kind == "sft":
            metrics = training.train_sft(
                peft_model, base.tokenizer, job_input.get("examples") or [], settings, optimizer, report, started
            )
        else:
            metrics = training.train_rl(
                peft_model,
                base.tokenizer,
                job_input.get("trajectory_groups") or [],
                settings,
                optimizer,
                report,
                started,
            )
        metrics = {
            **metrics,
            "training_seconds": time.perf_counter() - started_at,
            "fulcrum_call_seconds": calls,
        }
        if job.cancel_requested or (heartbeat.lost is None and job.heartbeat()):
            raise training.Cancelled()
        files = models.save_adapter(peft_model, base.dtype)
        if base.gguf is not None:
            files["adapter_model.gguf"] = models.gguf_adapter(files, base.gguf)
        state = optimizer_state.state_of(peft_model, optimizer)
        files[optimizer_state.FILE] = optimizer_state.write(state)
        digests = {path: job.upload(path, content)["digest"] for path, content in files.items()}
        job.finish({k: float(v) for k, v in metrics.items()})
        memory.keep(claim.model["id"], digests, state)
        log.info("job %s succeeded", claim.job_id)
        return "succeeded"
    finally:
        base.release(peft_model)


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
) -> int:
    """Registers and runs jobs until `max_jobs` ran (forever without it). Answers the number of jobs run."""
    lora = lora or models.LoraSettings()
    base = models.BaseModel(base_model, model_path, gguf_cache)
    server = protocol.Server(server_url, api_key)
    name = name or f"{socket.gethostname()}-{os.getpid()}"
    worker = server.register(name, [base_model])
    log.info("worker %s (%s) registered for %s on %s", worker["id"], name, base_model, base.device)
    memory = optimizer_state.Memory()
    ran = 0
    while max_jobs is None or ran < max_jobs:
        try:
            claim = server.claim(worker["id"], wait)
        except (requests.RequestException, protocol.ProtocolError) as error:
            if isinstance(error, protocol.ProtocolError) and error.status in (401, 403, 404):
                raise
            log.warning("claim failed (%s); trying again", error)
            time.sleep(2)
            continue
        if claim is None:
            continue
        log.info("job %s (%s, attempt %d) claimed", claim.job_id, claim.kind, claim.attempt)
        outcome = run_job(server.job(claim), base, lora, memory)
        log.info("job %s: %s", claim.job_id, outcome)
        ran += 1
    return ran
