"""Tasks on a Dask cluster that end, with results or a clear error, whatever workers are lost.

Dask runs a task again elsewhere when its worker dies, but two losses it does not recover:

* data scattered from the client (``client.scatter``) has no recipe to make it again, so
  when every worker holding it dies, the scheduler forgets it and cancels every task that
  needs it ("already forgotten");
* while the cluster has no worker at all, tasks wait for one forever.

:func:`gather` submits one task per piece of work and watches them. A task cancelled with
its data is submitted again once a worker is there, with that data sent afresh by its
:class:`Shipment` (the client still holds it). A cluster left without any worker for
:func:`worker_wait` seconds (Dask config ``forestimp.worker-wait``, default 60 s), or
losses beyond ``MAX_LOSSES`` per piece, end the call with
:class:`~forestimp.exceptions.ClusterError`, which says what happened; a task's own
exception (a ``DataError`` from a damaged file) is raised as it is. Every task is a pure
function of its inputs, so a piece computed again gives the same result.

Tasks carry no worker restrictions: with ``workers=[address], allow_other_workers=True``,
a task whose worker died stays ``no-worker`` after replacements register. The scheduler
spreads tasks over idle workers by itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError
from typing import Any

import dask.config
from dask.utils import parse_timedelta
from distributed import Client, Future, wait
from distributed.scheduler import KilledWorker

from .exceptions import ClusterError

# How long a call waits for a worker when the cluster has none (starting, or its workers
# being restarted by their nannies or replaced by a scheduler of jobs) before it gives up:
# ``dask.config.set({"forestimp.worker-wait": "5 minutes"})``.
WORKER_WAIT = "60s"


def worker_wait() -> float:
    """Seconds to wait for a worker: the Dask config ``forestimp.worker-wait`` (a number of
    seconds or a duration such as ``"2 minutes"``), else :data:`WORKER_WAIT`."""
    return float(parse_timedelta(dask.config.get("forestimp.worker-wait", WORKER_WAIT)))


# How often each piece may be lost with its workers before the call gives up.
MAX_LOSSES = 3
# Seconds between two looks at the cluster while tasks run.
_POLL_S = 1.0


class Shipment:
    """Data the tasks read, sent to the workers by ``send()`` (scatter, compute), and sent
    again when a worker loss took it with it."""

    def __init__(self, send: Callable[[], Any]) -> None:
        self._send = send
        self._value: Any = None

    def get(self) -> Any:
        if self._value is None or any(
            f.status in ("cancelled", "lost") for f in _futures_in(self._value)
        ):
            self._value = self._send()
        return self._value


def _futures_in(value: Any) -> list[Future]:
    if isinstance(value, Future):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [f for v in value for f in _futures_in(v)]
    return []


def worker_count(client: Client, lost_by: str | None = None) -> int:
    """The number of workers, after waiting up to :func:`worker_wait` seconds for a first
    one; raises :class:`ClusterError` when none registers (naming ``lost_by``, the work
    that lost them, if any)."""
    n = len(client.scheduler_info()["workers"])
    if n:
        return n
    try:
        client.wait_for_workers(1, timeout=worker_wait())
    except TimeoutError:
        if lost_by:
            raise ClusterError(_all_lost(lost_by)) from None
        raise ClusterError(
            f"the Dask cluster has no workers (waited {worker_wait():g} s for one)"
        ) from None
    return len(client.scheduler_info()["workers"])


def _all_lost(what: str) -> str:
    return (
        f"{what}: the Dask cluster lost all its workers and none registered in "
        f"{worker_wait():g} s (Dask config forestimp.worker-wait)"
    )


def gather(
    client: Client, submit: Callable[[Any], Future], pieces: Sequence[Any], what: str
) -> list[Any]:
    """``[submit(piece).result() for piece in pieces]``, run at once, surviving the loss
    of workers as the module doc says; ``what`` names the work in errors."""
    pending = {submit(piece): k for k, piece in enumerate(pieces)}
    results: list[Any] = [None] * len(pieces)
    losses = [0] * len(pieces)
    empty_since: float | None = None
    while pending:
        try:
            done = wait(list(pending), timeout=_POLL_S, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            empty_since = _still_has_workers(client, empty_since, what)
            continue
        except CancelledError:  # raised by wait for any cancelled future: handled below
            done = {future for future in pending if future.status != "pending"}
        lost = []
        for future in done:
            k = pending.pop(future)
            if future.status == "finished":
                results[k] = future.result()
            elif future.status == "error":
                _raise_task_error(future, what)
            else:  # cancelled: its data was forgotten with the workers holding it
                lost.append(k)
        for k in lost:
            losses[k] += 1
            if losses[k] > MAX_LOSSES:
                raise ClusterError(
                    f"{what}: a task was lost with its workers {losses[k]} times; "
                    "the cluster keeps losing workers"
                )
        if lost:
            worker_count(client, lost_by=what)
            pending.update({submit(pieces[k]): k for k in lost})
    return results


def _still_has_workers(client: Client, empty_since: float | None, what: str) -> float | None:
    """``None`` while the cluster has workers, else when it was first seen without any;
    raises :class:`ClusterError` once that is :func:`worker_wait` seconds ago."""
    if client.scheduler_info()["workers"]:
        return None
    now = time.monotonic()
    if empty_since is not None and now - empty_since > worker_wait():
        raise ClusterError(_all_lost(what))
    return now if empty_since is None else empty_since


def _raise_task_error(future: Future, what: str) -> None:
    error = future.exception()
    if isinstance(error, KilledWorker):
        raise ClusterError(
            f"{what}: a task's workers died {error.allowed_failures + 1} times while it "
            "ran (out of memory, or killed); giving up"
        ) from error
    future.result()  # the task's own exception, with its remote traceback
