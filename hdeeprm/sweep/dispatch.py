"""Run a sweep: skip finished runs, prepare shared inputs, run the rest in parallel, gather.

Order of work: each distinct inputs folder is prepared by exactly one task; the runs that read
it are submitted when it is ready (runs of other folders keep the workers busy meanwhile).
A run that fails, or whose inputs could not be prepared, gets a ``failed`` record with its
error; the other runs go on. Re-running the same sweep recomputes only the runs without a
valid ``result.json``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from hdeeprm._atomic import check_writable
from hdeeprm.sweep.backends import Backend
from hdeeprm.sweep.spec import RunSpec, Sweep
from hdeeprm.sweep.tasks import prepare_task, read_result, run_task


@dataclass(slots=True)
class Progress:
    """Counts shown while a sweep runs; ``left`` is the estimated time to finish, in s."""

    total: int
    reused: int = 0
    done: int = 0
    failed: int = 0
    running: int = 0
    elapsed: float = 0.0
    left: float | None = None

    @property
    def finished(self) -> int:
        return self.reused + self.done + self.failed

    def line(self) -> str:
        left = "?" if self.left is None else _clock(self.left)
        queued = self.total - self.finished - self.running
        reused = f" ({self.reused} from a previous sweep)" if self.reused else ""
        return (
            f"runs: {self.reused + self.done}/{self.total} done{reused}, {self.running} running, "
            f"{self.failed} failed, {queued} queued; elapsed {_clock(self.elapsed)}, "
            f"left ~{left}"
        )


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class ProgressPrinter:
    """A tqdm bar of finished runs with the running, failed and queued counts, on a terminal;
    nothing when the stream is not one (a log file or a pipe would only collect redraws)."""

    def __init__(self, stream: TextIO | None = None, interval: float = 1.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._bar: tqdm | None = None
        self._drawn = 0.0

    def __call__(self, progress: Progress, final: bool = False) -> None:
        if self._bar is None:
            self._bar = tqdm(
                total=progress.total,
                initial=progress.finished,
                desc="runs",
                unit="run",
                file=self.stream,
                mininterval=self.interval,
                dynamic_ncols=True,
                disable=not self.stream.isatty(),
            )
        bar = self._bar
        queued = progress.total - progress.finished - progress.running
        reused = f", {progress.reused} from a previous sweep" if progress.reused else ""
        bar.set_postfix_str(
            f"{progress.running} running, {progress.failed} failed, {queued} queued{reused}",
            refresh=False,
        )
        # Counts set, not added: the rate and time left are then the sweep's mean so far.
        bar.n = progress.finished
        now = time.monotonic()
        if final:
            bar.close()  # draws the last state
        elif now - self._drawn >= self.interval:
            bar.refresh()
            self._drawn = now


@dataclass(slots=True)
class SweepResult:
    """Records of every run of the sweep, in grid order."""

    sweep: Sweep
    records: list[dict[str, Any]] = field(default_factory=list)
    reused: int = 0
    wall_time: float = 0.0

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["status"] != "done"]


def check_output_dir(folder: str | os.PathLike[str]) -> None:
    """Create the sweep folder and try a write in it, as ``hdeeprm-launch`` does for its run
    folder: a folder under a regular file or a read-only one is an
    :class:`~hdeeprm.errors.OutputError` before any run starts, not one failure per run."""
    check_writable(Path(folder) / "results.csv")


def run_sweep(
    sweep: Sweep,
    backend: Backend,
    *,
    on_progress: Callable[[Progress, bool], None] | None = None,
    poll: float = 0.5,
) -> SweepResult:
    """Run every unfinished run of ``sweep`` on ``backend`` and return all records.

    ``on_progress(progress, final)`` is called after every change (see :class:`ProgressPrinter`).
    The backend is closed on return.
    """
    check_output_dir(sweep.output_dir)
    start = time.perf_counter()
    records: dict[str, dict[str, Any]] = {}
    todo: dict[str, list[RunSpec]] = {}
    for run in sweep.runs:
        previous = read_result(run)
        if previous is not None:
            records[run.run_id] = previous
        else:
            todo.setdefault(run.inputs_dir, []).append(run)
    progress = Progress(total=len(sweep.runs), reused=len(records))

    pending: dict[Any, tuple[str, Any]] = {}  # handle -> ("prepare", inputs_dir) | ("run", run)
    for inputs_dir, runs in todo.items():
        pending[backend.submit(prepare_task, inputs_dir, runs[0])] = ("prepare", inputs_dir)
    durations: list[float] = []

    def report(final: bool = False) -> None:
        progress.elapsed = time.perf_counter() - start
        runs_in_flight = sum(1 for kind, _ in pending.values() if kind == "run")
        progress.running = min(runs_in_flight, backend.workers)
        remaining = progress.total - progress.finished
        if durations:
            # Time per run as seen by the whole pool: elapsed over runs finished this time.
            per_run = progress.elapsed / len(durations)
            progress.left = remaining * per_run
        elif remaining == 0:
            progress.left = 0.0
        if on_progress is not None:
            on_progress(progress, final)

    try:
        report()
        while pending:
            for handle in backend.wait(list(pending), poll):
                kind, item = pending.pop(handle)
                try:
                    value = backend.result(handle)
                except Exception as exc:  # noqa: BLE001 - a worker died: report, go on
                    value = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                if kind == "prepare":
                    runs = todo[item]
                    if value.get("ok"):
                        for run in runs:
                            pending[backend.submit(run_task, run)] = ("run", run)
                    else:
                        for run in runs:
                            records[run.run_id] = _failed(run, f"inputs: {value['error']}")
                            progress.failed += 1
                else:
                    run = item
                    if "status" not in value:  # the worker itself failed
                        value = _failed(run, value["error"])
                    records[run.run_id] = value
                    durations.append(value.get("timing", {}).get("wall_time", 0.0))
                    if value["status"] == "done":
                        progress.done += 1
                    else:
                        progress.failed += 1
            report()
    finally:
        backend.close()
    report(final=True)
    ordered = [records[run.run_id] for run in sweep.runs if run.run_id in records]
    return SweepResult(sweep, ordered, progress.reused, time.perf_counter() - start)


def _failed(run: RunSpec, error: str) -> dict[str, Any]:
    return {
        "version": None,
        "run_id": run.run_id,
        "params": run.params,
        "status": "failed",
        "error": error,
        "metrics": {},
        "timing": {},
    }
