"""The worker protocol of `openapi/training.yaml` (`/api/v1/workers/...`), HTTP only."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

import requests

log = logging.getLogger("fulcrum_worker")


class ProtocolError(Exception):
    """The server answered something the protocol does not allow here."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        super().__init__(f"{method} {path}: HTTP {status} {body[:500]}")
        self.status = status


class LeaseLost(ProtocolError):
    """409: the job's lease ran out (or the job ended); the job must be dropped."""


@dataclass(frozen=True)
class FileRef:
    path: str
    size: int
    digest: str


@dataclass(frozen=True)
class Claim:
    job_id: str
    kind: str
    attempt: int
    token: str
    lease_seconds: int
    model: dict[str, Any]
    base_step: int
    base_files: list[FileRef]


def _check(response: requests.Response, *expected: int) -> requests.Response:
    if response.status_code in expected:
        return response
    request = response.request
    path = request.path_url if request is not None else "?"
    method = request.method if request is not None else "?"
    error = LeaseLost if response.status_code == 409 else ProtocolError
    raise error(str(method), path, response.status_code, response.text)


class Server:
    """Calls made with a server administrator's API key: register and claim."""

    def __init__(self, base_url: str, api_key: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.http = requests.Session()

    def register(self, name: str, base_models: list[str]) -> dict[str, Any]:
        response = self.http.post(
            f"{self.base_url}/api/v1/workers",
            json={"name": name, "base_models": base_models},
            headers={"Authorization": f"Bearer {self.api_key}"},
            timeout=self.timeout,
        )
        return _check(response, 201).json()

    def claim(self, worker_id: str, wait: int = 20) -> Claim | None:
        response = self.http.post(
            f"{self.base_url}/api/v1/workers/{worker_id}/claim",
            params={"wait": wait},
            headers={"Authorization": f"Bearer {self.api_key}"},
            timeout=self.timeout + wait,
        )
        if _check(response, 200, 204).status_code == 204:
            return None
        body = response.json()
        base = body["base_checkpoint"]
        return Claim(
            job_id=body["job_id"],
            kind=body["kind"],
            attempt=body["attempt"],
            token=body["token"],
            lease_seconds=body["lease_seconds"],
            model=body["model"],
            base_step=base["step"],
            base_files=[FileRef(f["path"], f["size"], f["digest"]) for f in base["files"]],
        )

    def job(self, claim: Claim) -> Job:
        return Job(self, claim)


# Seconds between the tries of a call the server refused with 507 (its storage is full: nothing of the request was
# stored, and the same request succeeds once its operator has freed space): about a minute and a half in all, while
# the heartbeat keeps the lease, before the call fails the job.
STORAGE_FULL_RETRIES = (2.0, 4.0, 8.0, 15.0, 30.0, 30.0)


class Job:
    """The calls of one claimed job, with its job-scoped token. Thread-safe: the heartbeat runs beside training."""

    def __init__(self, server: Server, claim: Claim, storage_full_retries: tuple[float, ...] = STORAGE_FULL_RETRIES):
        self.server = server
        self.claim = claim
        self.prefix = f"{server.base_url}/api/v1/workers/jobs/{claim.job_id}"
        self.headers = {"Authorization": f"Bearer {claim.token}"}
        self.storage_full_retries = storage_full_retries
        self._lock = threading.Lock()
        self.cancel_requested = False

    def _call(self, method: str, path: str, expected: int = 200, **kwargs: Any) -> requests.Response:
        headers = {**self.headers, **kwargs.pop("headers", {})}
        for delay in (*self.storage_full_retries, None):
            with self._lock:
                response = self.server.http.request(
                    method, self.prefix + path, headers=headers, timeout=self.server.timeout, **kwargs
                )
            if response.status_code != 507 or delay is None:
                break
            log.warning("%s %s: the server's storage is full (507); trying again in %.0f s", method, path, delay)
            time.sleep(delay)
        return _check(response, expected)

    def input(self) -> dict[str, Any]:
        return self._call("GET", "/input").json()

    def base_checkpoint_file(self, path: str) -> bytes:
        return self._call("GET", "/base-checkpoint", params={"path": path}).content

    def _lease(self, response: requests.Response) -> bool:
        if response.json().get("cancel_requested"):
            self.cancel_requested = True
        return self.cancel_requested

    def event(self, type_: str, data: dict[str, Any]) -> bool:
        """Posts an event (renews the lease); True when a cancel was requested."""
        return self._lease(self._call("POST", "/events", json={"type": type_, "data": data}))

    def heartbeat(self) -> bool:
        return self._lease(self._call("POST", "/heartbeat"))

    def upload(self, path: str, content: bytes) -> dict[str, Any]:
        return self._call(
            "PUT",
            "/checkpoint",
            params={"path": path},
            data=content,
            headers={"Content-Type": "application/octet-stream"},
        ).json()

    def finish(self, metrics: dict[str, float]) -> dict[str, Any]:
        return self._call("POST", "/finish", json={"metrics": metrics}).json()

    def fail(self, message: str) -> dict[str, Any]:
        return self._call("POST", "/fail", json={"error_message": message[:4000]}).json()


class Leased(Protocol):
    """What holds a lease: a job, or a Tinker model a worker holds."""

    def heartbeat(self) -> Any: ...


class Heartbeat:
    """Renews a lease (a job's every `lease_seconds / 3`) while a long step runs; remembers a lost lease or a cancel."""

    def __init__(self, leased: Leased, interval: float, name: str) -> None:
        self.leased = leased
        self.interval = interval
        self.lost: LeaseLost | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.leased.heartbeat()
            except LeaseLost as lost:
                self.lost = lost
                return
            except (requests.RequestException, ProtocolError):
                continue  # a passing network problem: the next beat (or event) tries again
