"""Where a sweep's tasks run: this process, local processes, or a Ray cluster.

A backend only submits a picklable function call and reports which submitted calls have
finished; the sweep logic (ordering, resume, progress) is the same for all three, so a run's
folder and record do not depend on the backend.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from typing import Any, Protocol


class Backend(Protocol):
    """A pool of workers running tasks."""

    name: str
    #: How many tasks run at once.
    workers: int

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Start ``fn(*args)``; return a handle."""

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        """Handles of ``handles`` that have finished (waits at most ``timeout`` s for one)."""

    def result(self, handle: Any) -> Any:
        """The value of a finished task (raises what the task or its worker raised)."""

    def close(self) -> None:
        """Stop the workers (pending tasks are cancelled)."""


class _Done:
    """A finished in-process call."""

    __slots__ = ("value", "error")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        try:
            self.value = fn(*args)
        except Exception as exc:  # noqa: BLE001 - re-raised by result()
            self.error = exc


class SerialBackend:
    """Runs each task in this process, one at a time (``--jobs 1``; the reference)."""

    name = "serial"
    workers = 1

    def __init__(self) -> None:
        self._queue: list[tuple[object, Callable[..., Any], tuple[Any, ...]]] = []
        self._done: dict[int, _Done] = {}

    def submit(self, fn: Callable[..., Any], *args: Any) -> object:
        handle = object()
        self._queue.append((handle, fn, args))
        return handle

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        finished = [h for h in handles if id(h) in self._done]
        if finished:
            return finished
        wanted = {id(h) for h in handles}
        for index, (handle, fn, args) in enumerate(self._queue):
            if id(handle) in wanted:
                del self._queue[index]
                self._done[id(handle)] = _Done(fn, args)
                return [handle]
        return []

    def result(self, handle: Any) -> Any:
        done = self._done.pop(id(handle))
        if done.error is not None:
            raise done.error
        return done.value

    def close(self) -> None:
        self._queue.clear()


class ProcessBackend:
    """Local worker processes (started with ``spawn``: no state inherited from the parent)."""

    name = "processes"

    def __init__(self, workers: int | None = None) -> None:
        import multiprocessing

        self.workers = workers or os.cpu_count() or 1
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn")
        )

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        return self._pool.submit(fn, *args)

    def wait(self, handles: Sequence[Future[Any]], timeout: float) -> list[Future[Any]]:
        done, _ = futures_wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Future[Any]) -> Any:
        return handle.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayBackend:
    """Tasks on a Ray cluster: a new local one (``address=None``) or an existing one.

    Every node needs hdeeprm installed (same version) and the sweep folder on a filesystem all
    nodes mount; the driver only sends run descriptions and receives small records.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        from hdeeprm._ray import ensure_ray, import_ray

        ray = self._ray = import_ray()
        self._owned = ensure_ray(address, workers if address is None else None)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = min(cpus, workers) if workers else cpus
        self._remote: dict[Callable[..., Any], Any] = {}

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(num_cpus=1, max_retries=0)(fn)
        return remote.remote(*args)

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        done, _ = self._ray.wait(list(handles), num_returns=1, timeout=timeout)
        if done:  # collect everything that is ready, not only the first
            more, _ = self._ray.wait(list(handles), num_returns=len(handles), timeout=0)
            done = more or done
        return list(done)

    def result(self, handle: Any) -> Any:
        return self._ray.get(handle)

    def close(self) -> None:
        if self._owned:
            self._ray.shutdown()


def make_backend(jobs: int | None = None, ray: str | None = None) -> Backend:
    """``ray`` is ``None`` (local), ``"local"`` (a new local Ray instance) or an address."""
    if ray is not None:
        return RayBackend(None if ray == "local" else ray, jobs)
    if jobs == 1:
        return SerialBackend()
    return ProcessBackend(jobs)
