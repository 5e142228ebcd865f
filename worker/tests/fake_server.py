"""A Fulcrum server's worker protocol (`/api/v1/workers/...`), answered from memory in a thread: the jobs queued in it
are claimed in order, and it records every call a worker makes, for tests of `fulcrum-worker run` as a process (or as
several, under torchrun)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


@dataclass
class QueuedJob:
    kind: str
    job_input: dict[str, Any]
    base_files: dict[str, bytes] = field(default_factory=lambda: {"checkpoint.json": b'{"adapter": null}'})
    base_step: int = 0
    model_id: str = "m"
    cancel_after: int | None = None  # gradient steps after which a cancel is requested
    job_id: str = ""
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    uploads: dict[str, bytes] = field(default_factory=dict)
    finished: dict[str, float] | None = None
    failed: str | None = None
    claimed: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)

    @property
    def steps(self) -> list[dict[str, Any]]:
        return [data for type_, data in self.events if type_ == "gradient_step"]

    def cancel_requested(self) -> bool:
        return self.cancel_after is not None and len(self.steps) >= self.cancel_after


@dataclass
class TinkerModel:
    """A Tinker training client waiting for a worker, with every operation it will get (in seq_id order, after its
    create_model). `next` hands them out one at a time, each until it is answered; then it tells the worker to
    release the model once `release` is set (at once, unless `hold`)."""

    model_id: str
    lora: dict[str, Any]
    operations: list[tuple[str, dict[str, Any]]]
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # a load_weights' request id: its files
    hold: bool = False  # not released until the test sets `release`
    lose_answers: set[int] = field(default_factory=set)  # the seq_ids whose first answer gets a 500 (not received)
    release: threading.Event = field(default_factory=threading.Event)
    worker: str | None = None
    released: str | None = None
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # request id: the body the worker posted
    uploads: dict[str, dict[str, bytes]] = field(default_factory=dict)
    answered: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.operations = [("create_model", {})] + list(self.operations)
        if not self.hold:
            self.release.set()

    def request_id(self, seq: int) -> str:
        return f"{self.model_id}-{seq}"

    def result(self, seq: int) -> dict[str, Any]:
        return self.results[self.request_id(seq)]


class FakeServer:
    def __init__(self, release_together: bool = False) -> None:
        """`release_together`: a Tinker model is released only once every model's operations were answered (so the
        worker holds them together)."""
        self.tinker: list[TinkerModel] = []
        self.release_together = release_together
        self.max_held = 0
        self.answers: list[str] = []  # the Tinker models' request ids in the order they were answered
        self.claims: list[dict[str, str]] = []  # the query of each Tinker claim
        self.jobs: list[QueuedJob] = []
        self.queue: list[QueuedJob] = []
        self.workers: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.shutdown()
        self.http.server_close()

    def add(self, job: QueuedJob) -> QueuedJob:
        with self.lock:
            job.job_id = f"job_{len(self.jobs) + 1}"
            self.jobs.append(job)
            self.queue.append(job)
        return job

    def add_tinker(self, model: TinkerModel) -> TinkerModel:
        with self.lock:
            self.tinker.append(model)
        return model

    def held(self, worker: str) -> list[TinkerModel]:
        return [m for m in self.tinker if m.worker == worker and m.released is None]

    def claim_tinker(self, worker: str, query: dict[str, str]) -> TinkerModel | None:
        deadline = time.monotonic() + min(float(query.get("wait", 0)), 1.0)
        while True:
            with self.lock:
                self.claims.append(query)
                waiting = [m for m in self.tinker if m.worker is None and m.released is None]
                if waiting and len(self.held(worker)) < int(query.get("max_models", 1)):
                    waiting[0].worker = worker
                    self.max_held = max(self.max_held, len(self.held(worker)))
                    return waiting[0]
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def next_operation(self, model: TinkerModel, wait: float) -> dict[str, Any]:
        deadline = time.monotonic() + min(wait, 1.0)
        while True:
            with self.lock:
                for seq, (kind, request) in enumerate(model.operations):
                    if model.request_id(seq) not in model.results:
                        operation = {"request_id": model.request_id(seq), "kind": kind, "seq_id": seq}
                        return {"release": False, "operation": {**operation, "request": request}}
                model.answered.set()
                everyone = not self.release_together or all(m.answered.is_set() for m in self.tinker)
                if model.release.is_set() and everyone:
                    return {"release": True, "reason": "its session ended"}
            if time.monotonic() >= deadline:
                return {"release": False}
            time.sleep(0.02)

    def job(self, job_id: str) -> QueuedJob:
        return next(j for j in self.jobs if j.job_id == job_id)

    def claim(self, wait: float) -> QueuedJob | None:
        deadline = time.monotonic() + min(wait, 1.0)
        while True:
            with self.lock:
                if self.queue:
                    job = self.queue.pop(0)
                    job.claimed.set()
                    return job
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)


def _handler(server: FakeServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _answer(self, status: int, body: Any = None, raw: bytes | None = None) -> None:
            content = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
            self.send_response(status)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _route(self, method: str) -> None:
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            parts = url.path.strip("/").split("/")[3:]  # after api/v1/workers
            body = self._body() if method in ("POST", "PUT") else b""
            if method == "POST" and parts == []:
                worker = {"id": f"worker_{len(server.workers) + 1}", **json.loads(body)}
                server.workers.append(worker)
                return self._answer(201, worker)
            if method == "POST" and len(parts) == 2 and parts[1] == "tinker-claim":
                model = server.claim_tinker(parts[0], query)
                if model is None:
                    return self._answer(204)
                claim = {"model_id": model.model_id, "base_model": "tiny", "attempt": 1, "lora": model.lora}
                return self._answer(200, {**claim, "token": f"tinker-{model.model_id}", "lease_seconds": 60})
            if parts[:1] == ["tinker-models"]:
                return self._tinker(method, parts[1], parts[2:], query, body)
            if method == "POST" and len(parts) == 2 and parts[1] == "claim":
                job = server.claim(float(query.get("wait", 1)))
                if job is None:
                    return self._answer(204)
                files = [
                    {"path": p, "size": len(c), "digest": hashlib.sha256(c).hexdigest()}
                    for p, c in job.base_files.items()
                ]
                claim = {
                    "job_id": job.job_id,
                    "kind": job.kind,
                    "attempt": 1,
                    "token": "token",
                    "lease_seconds": 60,
                    "model": {"id": job.model_id},
                    "base_checkpoint": {"step": job.base_step, "files": files},
                }
                return self._answer(200, claim)
            job = server.job(parts[1])
            action = parts[2]
            if job.ended.is_set():
                return self._answer(409, {"detail": "the job ended"})
            if action == "input":
                return self._answer(200, job.job_input)
            if action == "base-checkpoint":
                return self._answer(200, raw=job.base_files[query["path"]])
            if action == "events":
                event = json.loads(body)
                job.events.append((event["type"], event.get("data") or {}))
                return self._answer(200, {"cancel_requested": job.cancel_requested()})
            if action == "heartbeat":
                return self._answer(200, {"cancel_requested": job.cancel_requested()})
            if action == "checkpoint":
                job.uploads[query["path"]] = body
                digest = hashlib.sha256(body).hexdigest()
                return self._answer(200, {"path": query["path"], "size": len(body), "digest": digest})
            if action == "finish":
                job.finished = json.loads(body)["metrics"]
                job.ended.set()
                return self._answer(200, {})
            if action == "fail":
                job.failed = json.loads(body)["error_message"]
                job.ended.set()
                return self._answer(200, {})
            return self._answer(404, {"detail": self.path})

        def _tinker(self, method: str, model_id: str, path: list[str], query: dict[str, str], body: bytes) -> None:
            model = next(m for m in server.tinker if m.model_id == model_id)
            if self.headers.get("Authorization") != f"Bearer tinker-{model_id}":
                return self._answer(401, {"detail": "not this model's token"})
            if model.released is not None:
                return self._answer(409, {"detail": f"released ({model.released})"})
            lease = {"lease_expires_at": "2030-01-01T00:00:00Z"}
            if path == ["next"]:
                return self._answer(200, server.next_operation(model, float(query.get("wait", 1))))
            if path == ["heartbeat"]:
                return self._answer(200, lease)
            if path == ["release"]:
                model.released = json.loads(body).get("reason") or "released"
                return self._answer(200, lease)
            if len(path) == 2 and path[0] == "results" and method == "POST":
                seq = int(path[1].rsplit("-", 1)[1])
                if seq in model.lose_answers:
                    model.lose_answers.discard(seq)
                    return self._answer(500, {"detail": "the answer was lost"})
                with server.lock:
                    model.results[path[1]] = json.loads(body)
                    server.answers.append(path[1])
                return self._answer(200, lease)
            if len(path) == 3 and path[0] == "results" and method == "PUT":
                model.uploads.setdefault(path[1], {})[query["path"]] = body
                digest = hashlib.sha256(body).hexdigest()
                return self._answer(200, {"path": query["path"], "size": len(body), "digest": digest})
            if len(path) == 3 and path[0] == "results" and method == "GET":
                return self._answer(200, raw=model.files[path[1]][query["path"]])
            return self._answer(404, {"detail": self.path})

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PUT(self) -> None:
            self._route("PUT")

    return Handler
