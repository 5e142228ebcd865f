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


class FakeServer:
    def __init__(self) -> None:
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
                return self._answer(204)  # no Tinker training client waits here
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

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PUT(self) -> None:
            self._route("PUT")

    return Handler
