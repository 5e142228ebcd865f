"""The Tinker training clients a worker holds (docs/tinker.md): up to `max_models` at once on its one base, each its own
LoRA adapter (`tinker.Adapters`) with its own AdamW state. Threads wait on the server: one long poll of `next` per held
model (which also renews the model's lease while its operation waits its turn and runs), and one of claims while
there is room. The worker's main thread runs the operations, one at a time, each model's in `seq_id` order. Under
torchrun, rank 0 does all of this and hands each operation that trains to every rank (`Sessions.apply`)."""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

import requests

from . import distributed, protocol, tinker
from . import model as models

log = logging.getLogger("fulcrum_worker")

# Seconds rank 0 waits for an event before it tells the other ranks (waiting in a collective) that it is still there.
KEEPALIVE = 5.0
# Seconds of a claim's long poll while models are held: when the last one goes, the worker waits for the poll's end
# before it claims jobs again.
CLAIM_WAIT = 5
SAVES = ("save_weights_for_sampler", "save_weights")
EVERY_RANK = ("forward", "forward_backward", "optim_step")


class Sessions:
    """The held models' sessions in this process; every rank of a group holds each one."""

    def __init__(self, base: models.BaseModel, group: distributed.Group) -> None:
        self.adapters = tinker.Adapters(base)
        self.group = group
        self.sessions: dict[str, tinker.Session] = {}

    def apply(self, package: dict[str, Any]) -> Any:
        """What rank 0 hands to every rank: `add` a model's adapter, `run` an operation of it, `load` a training state
        into it, `drop` it. An error on any rank raises on every rank (`tinker._agree`)."""
        action, model_id = package["tinker"], package["model"]
        if action == "drop":
            session = self.sessions.pop(model_id, None)
            if session is not None:
                session.close()
            return None
        if action == "run":
            return self.sessions[model_id].run(package["kind"], package["request"], model_id)
        result, error = None, None
        try:
            if action == "add":
                result = self.sessions[model_id] = tinker.Session(self.adapters, package["lora"], self.group)
            elif action == "load":
                result = self.sessions[model_id].load(package["files"], package["optimizer"])
            else:
                raise ValueError(f"unknown Tinker action {action!r}")
        except Exception as failure:
            error = failure
        tinker._agree(self.group, error)
        return result


@dataclass
class Model:
    """A held model on rank 0: its calls, its session (None when its adapter was refused: `refused` says why), the
    last operation answered (its answer is sent again if the server hands it out again: it was not received)."""

    held: tinker.Held
    session: tinker.Session | None = None
    refused: str | None = None
    refused_category: str = "user"
    last: tuple[str, dict[str, Any]] | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def id(self) -> str:
        return self.held.claim.model_id


class Desk:
    """Rank 0's side: claims models while there is room and serves their operations until none is held."""

    def __init__(
        self,
        server: protocol.Server,
        worker_id: str,
        sessions: Sessions,
        max_models: int,
    ) -> None:
        self.server = server
        self.worker_id = worker_id
        self.sessions = sessions
        self.group = sessions.group
        self.max_models = max_models
        self.models: dict[str, Model] = {}
        self.events: queue.Queue = queue.Queue()
        self._claims_stop = threading.Event()

    def claim(self, wait: int = 0) -> bool:
        """Claims a waiting model when there is room; True when one came (it is held now)."""
        claimed = self._claim(wait)
        if claimed is None:
            return False
        try:
            self._hold(claimed)
        except BaseException as stopped:
            self._abandon(_why(stopped))
            raise
        return True

    def _claim(self, wait: int) -> tinker.TinkerClaim | None:
        if len(self.models) >= self.max_models:
            return None
        try:
            return tinker.claim(self.server, self.worker_id, wait, self.max_models)
        except (requests.RequestException, protocol.ProtocolError) as error:
            log.warning("tinker claim failed (%s)", error)
            return None

    def serve(self) -> None:
        """Serves the held models until every one is released or lost, claiming more while there is room. Anything
        that stops the worker meanwhile (a broken process group, a signal) releases every held model, saying why, and
        is raised."""
        claims = None
        try:
            while True:
                if self.models and claims is None:
                    self._claims_stop.clear()
                    claims = threading.Thread(target=self._claiming, name="tinker-claims", daemon=True)
                    claims.start()
                if not self.models and claims is not None:
                    self._claims_stop.set()
                    claims.join()
                    claims = None
                if not self.models and self.events.empty():
                    return
                try:
                    event = self.events.get(timeout=KEEPALIVE)
                except queue.Empty:
                    self.group.broadcast(None)  # the other ranks wait in a collective, which must not time out
                    continue
                self._handle(event)
        except BaseException as stopped:
            self._abandon(_why(stopped))
            raise
        finally:
            self._claims_stop.set()

    def _claiming(self) -> None:
        while not self._claims_stop.is_set():
            if len(self.models) >= self.max_models:
                self._claims_stop.wait(0.5)
                continue
            claimed = self._claim(CLAIM_WAIT)
            if claimed is not None:
                self.events.put(("claimed", claimed))
                self._claims_stop.wait(0.2)  # the main thread holds it before the next claim counts the room

    def _hold(self, claimed: tinker.TinkerClaim) -> None:
        log.info("tinker model %s (attempt %d) claimed", claimed.model_id, claimed.attempt)
        model = Model(tinker.Held(self.server, claimed))
        self.models[model.id] = model
        interval = max(claimed.lease_seconds / 3, 0.5)
        try:
            with protocol.Heartbeat(model.held, interval, f"tinker-{model.id}"):
                model.session = self._everywhere({"tinker": "add", "model": model.id, "lora": claimed.lora})
        except tinker.UserError as error:
            model.refused = str(error)
        except (distributed.GroupBroken, protocol.LeaseLost):
            raise
        except Exception as error:  # the adapter could not be made (memory, say): the model is given back
            log.exception("tinker model %s: its adapter could not be made", model.id)
            model.refused, model.refused_category = f"fulcrum-worker: {type(error).__name__}: {error}", "server"
        threading.Thread(target=self._poll, args=(model,), name=f"tinker-{model.id}", daemon=True).start()

    def _poll(self, model: Model) -> None:
        """The model's thread: its next operation, handed to the main thread; the lease renewed until it was run."""
        lease = model.held.claim.lease_seconds
        interval = max(lease / 3, 0.5)
        while not model.stop.is_set():
            try:
                nxt = model.held.next(wait=min(20, max(1, lease // 3)))
            except protocol.LeaseLost as lost:
                self.events.put(("lost", model, str(lost)))
                return
            except (requests.RequestException, protocol.ProtocolError) as error:
                log.warning("tinker model %s: next failed (%s); trying again", model.id, error)
                model.stop.wait(1)
                continue
            if nxt.get("release"):
                self.events.put(("release", model, nxt.get("reason") or "released"))
                return
            operation = nxt.get("operation")
            if operation is None:
                continue
            done = threading.Event()
            self.events.put(("operation", model, operation, done))
            while not done.wait(interval):  # while it waits its turn behind other models' operations, and runs
                try:
                    model.held.heartbeat()
                except protocol.LeaseLost:
                    break  # the main thread meets the 409 too, when it answers
                except (requests.RequestException, protocol.ProtocolError):
                    continue
            done.wait()

    def _handle(self, event: tuple) -> None:
        kind = event[0]
        if kind == "claimed":
            self._hold(event[1])
            return
        model: Model = event[1]
        if model.id not in self.models:
            if kind == "operation":
                event[3].set()
            return
        if kind == "release":
            try:
                model.held.release(event[2])
            except (requests.RequestException, protocol.ProtocolError) as error:
                log.warning("tinker model %s: its release was not received (%s)", model.id, error)
            self._drop(model, f"released ({event[2]})")
        elif kind == "lost":
            self._drop(model, f"lease lost ({event[2]})")
        else:
            try:
                self._operate(model, event[2])
            finally:
                event[3].set()

    def _operate(self, model: Model, operation: dict[str, Any]) -> None:
        request_id = operation["request_id"]
        try:
            if model.last is not None and model.last[0] == request_id:
                answer = model.last[1]  # answered before, but the answer did not arrive
            else:
                answer = self._answer(model, operation)
                model.last = (request_id, answer)
            model.held.finish(request_id, **answer)
            if model.refused is not None and operation["kind"] == "create_model":
                model.held.release(model.refused)
                self._drop(model, "refused")
        except protocol.LeaseLost as lost:
            self._drop(model, f"lease lost ({lost})")
        except distributed.GroupBroken as broken:
            _quietly(model.held.finish, request_id, error=f"fulcrum-worker: {broken}")
            model.last = (request_id, {})  # answered: the release says the rest
            raise
        except (requests.RequestException, protocol.ProtocolError) as error:
            log.warning("tinker model %s: the answer to %s was not received (%s)", model.id, request_id, error)

    def _answer(self, model: Model, operation: dict[str, Any]) -> dict[str, Any]:
        """The result of an operation, or its error (category `user` for a wrong request)."""
        if model.refused is not None:
            return {"error": model.refused, "category": model.refused_category}
        kind, request = operation["kind"], operation["request"]
        try:
            if kind == "create_model":
                result = {"model_id": model.id, "type": "create_model"}
            elif kind in EVERY_RANK:
                package = {"tinker": "run", "model": model.id, "kind": kind, "request": request}
                result = self._everywhere(package)
            elif kind in SAVES:
                # the files first (rank 0's: every rank holds the same weights and optimizer state); the result then
                # makes them the model's next checkpoint
                files = model.session.state() if kind == "save_weights" else model.session.weights()
                for path, content in files.items():
                    model.held.upload(operation["request_id"], path, content)
                result = {}
            elif kind == "load_weights":
                files = {f["path"]: model.held.download(operation["request_id"], f["path"]) for f in request["files"]}
                optimizer = bool(request.get("optimizer"))
                self._everywhere({"tinker": "load", "model": model.id, "files": files, "optimizer": optimizer})
                result = {"path": request["path"], "type": "load_weights"}
            else:
                raise tinker.UserError(f"operation {kind} is not served by this worker")
        except tinker.UserError as error:
            return {"error": str(error), "category": "user"}
        except (protocol.LeaseLost, distributed.GroupBroken):
            raise
        except Exception as error:  # the model's state may be broken: this one fails, the worker goes on
            log.exception("tinker model %s: %s failed", model.id, kind)
            return {"error": f"fulcrum-worker: {type(error).__name__}: {error}", "category": "server"}
        return {"result": result}

    def _everywhere(self, package: dict[str, Any]) -> Any:
        """Hands `package` to every rank and does it here too; rank 0's outcome."""
        self.group.broadcast(package)
        return self.sessions.apply(package)

    def _drop(self, model: Model, how: str) -> None:
        model.stop.set()
        self.models.pop(model.id, None)
        if model.session is not None:
            self._everywhere({"tinker": "drop", "model": model.id})
        log.info("tinker model %s: %s", model.id, how)

    def _abandon(self, reason: str) -> None:
        """Releases every held model with `reason` (their unsaved state goes with the worker), without touching the
        process group (it may be broken)."""
        for model in list(self.models.values()):
            model.stop.set()
            _quietly(model.held.release, reason)
            log.error("tinker model %s released: %s", model.id, reason)
        self.models.clear()


def _why(stopped: BaseException) -> str:
    if isinstance(stopped, distributed.GroupBroken):
        return f"the fulcrum-worker's process group broke: {stopped}"
    return f"the fulcrum-worker stopped ({type(stopped).__name__}: {stopped})"


def _quietly(call, *args: Any, **kwargs: Any) -> None:
    try:
        call(*args, **kwargs)
    except (requests.RequestException, protocol.ProtocolError) as error:
        log.warning("tinker: a call failed while the worker stops (%s)", error)
