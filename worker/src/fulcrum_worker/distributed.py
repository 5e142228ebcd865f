"""One job over several processes (`torchrun`): the process group, the job handed from rank 0 to every rank, and the
few collectives the training loop agrees through. Without torchrun (no `WORLD_SIZE`, or 1) the worker is a group of
one and every call here is local."""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

log = logging.getLogger("fulcrum_worker")

MODES = ("single", "ddp", "fsdp")


class GroupBroken(Exception):
    """A collective failed: a rank exited or stopped answering (or the launcher stopped this one). The group cannot
    train again: the job fails with this message and the worker exits, for the launcher to restart the whole group."""


class RankFailed(Exception):
    """Another rank failed the job's step; every rank stops at that step. The message names the rank and its error;
    `kind` is the name of the error's type there."""

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


class Stopped(Exception):
    """Rank 0 stopped the job (a cancel, a lost lease, a failure): the other ranks drop it and wait for the next."""


@dataclass(frozen=True)
class Group:
    """This process's place in the job's process group: `rank` of `world_size`, the device it trains on, and the mode
    (`single`: one process; `ddp`: every rank holds the whole model and trains its share of each batch; `fsdp`: the
    model's parameters, gradients and optimizer state sharded over the ranks)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    mode: str = "single"

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def device(self) -> torch.device:
        if torch.cuda.is_available():
            return torch.device("cuda", self.local_rank if self.distributed else torch.cuda.current_device())
        return torch.device("cpu")

    def broadcast(self, value: Any = None) -> Any:
        """Rank 0's `value` on every rank (pickled: plain data, bytes and CPU tensors)."""
        if not self.distributed:
            return value
        box = [value if self.main else None]
        _collective(torch.distributed.broadcast_object_list, box, src=0)
        return box[0]

    def gather(self, value: Any) -> list[Any]:
        """Every rank's `value` (pickled), in rank order, on every rank."""
        if not self.distributed:
            return [value]
        values: list[Any] = [None] * self.world_size
        _collective(torch.distributed.all_gather_object, values, value)
        return values

    def sum(self, values: torch.Tensor) -> torch.Tensor:
        """The element-wise sum of every rank's `values` (a float tensor on this rank's device), in place."""
        if self.distributed:
            _collective(torch.distributed.all_reduce, values, op=torch.distributed.ReduceOp.SUM)
        return values

    def maximum(self, values: torch.Tensor) -> torch.Tensor:
        if self.distributed:
            _collective(torch.distributed.all_reduce, values, op=torch.distributed.ReduceOp.MAX)
        return values

    def agree(self, error: BaseException | None) -> None:
        """A point every rank reaches at the same step: when any rank brings an error, every rank raises. Rank 0
        raises its own error, or `RankFailed` naming another rank's; the other ranks raise `Stopped` (rank 0 reports
        the failure)."""
        if not self.distributed:
            if error is not None:
                raise error
            return
        failed = self.maximum(torch.tensor([0.0 if error is None else 1.0], device=self.device()))
        if float(failed[0]) == 0:
            return
        messages: list[str | None] = [None] * self.world_size
        text = None if error is None else f"{type(error).__name__}: {error}"
        _collective(torch.distributed.all_gather_object, messages, text)
        if not self.main:
            raise Stopped() from error
        if error is not None:
            raise error
        rank, message = next((r, m) for r, m in enumerate(messages) if m is not None)
        raise RankFailed(f"rank {rank} of {self.world_size}: {message}", message.split(":", 1)[0])

    @contextlib.contextmanager
    def agreement(self) -> Iterator[None]:
        """A block that every rank runs up to the same point, without collectives inside: an error in it, on any rank,
        raises on every rank once all got there (see `agree`)."""
        error = None
        try:
            yield
        except Exception as failure:
            error = failure
        self.agree(error)

    def barrier(self) -> None:
        if self.distributed:
            _collective(torch.distributed.barrier)


def _collective(call, *args, **kwargs) -> Any:
    try:
        return call(*args, **kwargs)
    except (RuntimeError, ValueError, ConnectionError) as error:  # gloo's and NCCL's errors are RuntimeErrors
        _broken.set()
        first = (str(error).strip().splitlines() or [""])[0][:300]
        raise GroupBroken(
            f"the training process group broke in {call.__name__} (a rank exited or stopped answering): {first}"
        ) from error


def start(shard: bool = False, timeout_seconds: float = 600.0) -> Group:
    """Joins the process group torchrun describes in the environment (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`,
    `MASTER_ADDR`, `MASTER_PORT`): NCCL on GPUs (one per local rank), gloo on CPUs. A collective that waits longer
    than `timeout_seconds` fails (`GroupBroken`): rank 0 talks to the server between collectives (a claim's long
    poll, downloads, uploads with their retries), so this bounds those, not only a rank that hangs."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return Group()
    rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    backend = "gloo"
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        backend = "nccl"
    torch.distributed.init_process_group(
        backend, rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=timeout_seconds)
    )
    group = Group(rank, world_size, local_rank, "fsdp" if shard else "ddp")
    if group.main:
        # torchrun's agent stops every rank with SIGTERM when one exits: rank 0 then fails its job with the reason
        # (and the lease is released) before it exits, instead of leaving the job to its lease's end
        signal.signal(signal.SIGTERM, _stopped_by_launcher)
    log.info("rank %d of %d (%s, %s)", rank, world_size, backend, group.mode)
    return group


# Set once this process knows its group is broken (a collective failed, or torchrun's SIGTERM came): the job's failure
# is being reported, and a SIGTERM that comes after must not cut that report short
_broken = threading.Event()


def _stopped_by_launcher(signum, frame) -> None:
    if _broken.is_set():
        return
    _broken.set()
    raise GroupBroken(
        "stopped by SIGTERM: under torchrun, another rank of the process group exited (or the launcher was stopped)"
    )


def finish(group: Group) -> None:
    """The end of a run that went well. Under torchrun every rank waits for the others first (no rank tears the group
    down while another still talks to it), the group is destroyed, and the process exits at once, without the
    interpreter's teardown: there, objects still holding the group (FSDP's modules) release gloo's threads too late,
    and `std::terminate` aborts the process (SIGABRT), an exit torchrun reports as the group's failure. Never returns
    in a group of more than one."""
    if not group.distributed:
        return
    group.barrier()
    stop(group)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def stop(group: Group) -> None:
    if group.distributed and torch.distributed.is_initialized():
        try:
            torch.distributed.destroy_process_group()
        except Exception:  # the group may be broken already; the process is exiting anyway
            log.debug("destroy_process_group: %s", traceback.format_exc())


def same_weights(model, group: Group) -> None:
    """Rank 0's trainable weights on every rank (DDP: the ranks start each job from the very same adapter)."""
    if not group.distributed:
        return
    parameters = [p for p in model.parameters() if p.requires_grad]
    flat = torch.cat([p.detach().reshape(-1) for p in parameters])
    _collective(torch.distributed.broadcast, flat, src=0)
    offset = 0
    with torch.no_grad():
        for p in parameters:
            p.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()


def share(count: int, group: Group) -> list[int]:
    """The positions in a batch of `count` sequences that this rank trains: every `world_size`-th from its rank."""
    return list(range(group.rank, count, group.world_size))
