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
from . import protocol, training

log = logging.getLogger("fulcrum_worker")


def run_job(job: protocol.Job, base: models.BaseModel, lora: models.LoraSettings) -> str:
    """Runs one claimed job to its end: `succeeded`, `failed`, `cancelled` or `dropped` (lease lost)."""
    claim = job.claim
    with protocol.Heartbeat(job, max(claim.lease_seconds / 3, 0.5)) as heartbeat:
        try:
            outcome = _train_and_upload(job, base, lora, heartbeat)
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
    try:
        call(*args)
    except protocol.LeaseLost:
        log.warning("job: lease lost before the end was reported")


def _train_and_upload(job: protocol.Job, base: models.BaseModel, lora: models.LoraSettings, heartbeat) -> str:
    claim = job.claim
    job_input = job.input()
    settings, ignored = training.Settings.of(job_input.get("config"), claim.kind)
    with tempfile.TemporaryDirectory(prefix="fulcrum-base-") as directory:
        names = {f.path for f in claim.base_files}
        adapter_dir = None
        if "adapter_model.safetensors" in names and "adapter_config.json" in names:
            for ref in claim.base_files:
                target = Path(directory, ref.path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(job.base_checkpoint_file(ref.path))
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

        started = {
            "base_step": claim.base_step,
            "device": str(base.device),
            "not_implemented": ignored,
        }
        if claim.kind == "sft":
            metrics = training.train_sft(
                peft_model, base.tokenizer, job_input.get("examples") or [], settings, report, started
            )
        else:
            metrics = training.train_rl(
                peft_model, base.tokenizer, job_input.get("trajectory_groups") or [], settings, report, started
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
        for path, content in files.items():
            job.upload(path, content)
        job.finish({k: float(v) for k, v in metrics.items()})
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
        outcome = run_job(server.job(claim), base, lora)
        log.info("job %s: %s", claim.job_id, outcome)
        ran += 1
    return ran
