"""What a worker does: prepare a shared inputs folder, or carry out one run.

These are plain functions of plain data so that any backend (this process, a spawned local
process, a Ray worker on another machine) runs exactly the same code and writes exactly the
same files. They never raise for a failing run: the error becomes part of the returned record,
so one bad run cannot stop a sweep.

A run is finished when its folder holds ``result.json`` (:data:`RESULT_FILE`), written
atomically after every other output; its ``fingerprint`` says which options produced it, so a
resumed sweep recomputes a run whose options changed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import json
import os
import shutil
import socket
import tempfile
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hdeeprm._atomic import atomic_open, write_json, write_text
from hdeeprm.sweep.spec import RunSpec

if TYPE_CHECKING:
    from hdeeprm.inputs import ExperimentInputs

RESULT_FILE = "result.json"
ERROR_FILE = "error.txt"
OPTIONS_FILE = "options.json"
#: Version of the result.json layout.
RESULT_VERSION = 1

# Inputs loaded by this worker process, reused by its next runs on the same folder.
_CACHE: dict[str, tuple[int | None, ExperimentInputs]] = {}


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def read_result(run: RunSpec) -> dict[str, Any] | None:
    """The record of a finished run, or ``None`` if the run must (re)run."""
    path = Path(run.run_dir) / RESULT_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("version") != RESULT_VERSION:
        return None
    if record.get("fingerprint") != run.fingerprint():
        return None
    return record


def prepare_task(inputs_dir: str, run: RunSpec) -> dict[str, Any]:
    """Generate (or check) the inputs folder shared by the runs that need the same files.

    Exactly one task prepares a given folder, before any run that reads it is started, so
    concurrent runs never race on ``platform.xml`` or ``workload.json``.
    """
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import options_from_json

    start = time.perf_counter()
    try:
        _check_visible(inputs_dir)
        # The options used are kept beside the inputs, so errors name a file that exists.
        source = Path(inputs_dir) / OPTIONS_FILE
        Path(inputs_dir).mkdir(parents=True, exist_ok=True)
        write_json(source, run.options, indent=1)
        options = options_from_json(run.options, source)
        inputs = prepare_inputs(options, inputs_dir, custom_workload=run.custom_workload)
        return {
            "inputs_dir": inputs_dir,
            "ok": True,
            "generated": list(inputs.generated),
            "nb_jobs": len(inputs.workload.jobs),
            "seconds": time.perf_counter() - start,
        }
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return {"inputs_dir": inputs_dir, "ok": False, "error": _describe(exc)}


def _check_visible(folder: str) -> None:
    """A worker on another machine must see the sweep folder (a shared filesystem)."""
    parent = Path(folder).parent.parent  # <sweep>/inputs/<key> -> <sweep>
    if not parent.is_dir():
        raise FileNotFoundError(
            f"sweep folder {parent} is not visible on host {socket.gethostname()}: on a "
            "cluster, put the sweep folder on a filesystem every node mounts"
        )


def _load_inputs(run: RunSpec) -> Any:
    """Prepared inputs (with the loaded platform.xml), cached per worker and inputs folder.

    The cache entry is keyed by the inputs manifest's modification time, so a folder that
    was regenerated meanwhile is read again.
    """
    from hdeeprm._manifest import MANIFEST_FILE
    from hdeeprm.inputs import prepare_inputs

    options = run.load_options()
    manifest = Path(run.inputs_dir) / MANIFEST_FILE
    stamp = manifest.stat().st_mtime_ns if manifest.exists() else None
    cached = _CACHE.get(run.inputs_dir)
    if cached is not None and cached[0] == stamp:
        return dataclasses.replace(cached[1], options=options, generated=[])
    inputs = prepare_inputs(options, run.inputs_dir, custom_workload=run.custom_workload)
    _CACHE.clear()  # one entry: a worker holds at most one workload in memory
    _CACHE[run.inputs_dir] = (stamp, inputs)
    return inputs


def run_task(run: RunSpec) -> dict[str, Any]:
    """Carry out one run in its folder and return its record (also its ``result.json``)."""
    start, cpu = time.perf_counter(), time.process_time()
    out = Path(run.run_dir)
    record: dict[str, Any] = {
        "version": RESULT_VERSION,
        "run_id": run.run_id,
        "fingerprint": None,
        "params": run.params,
        "status": "failed",
        "error": None,
        "metrics": {},
    }
    try:
        record["fingerprint"] = run.fingerprint()
        _check_visible(run.inputs_dir)
        out.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(out / RESULT_FILE)  # a stale result must not survive a failed rerun
        write_json(out / OPTIONS_FILE, run.options, indent=1)
        inputs = _load_inputs(run)
        # Outputs are written on this machine's disk first, then the kept ones are copied
        # into the (possibly shared) run folder: a run that dies leaves nothing half-done
        # there, and the shared filesystem only carries the files asked for.
        with tempfile.TemporaryDirectory(prefix="hdeeprm-run-") as work:
            if run.agent_file is not None:
                extra = _learning_run(run, inputs, Path(work))
            else:
                extra = _classic_run(inputs, Path(work))
            record["metrics"] = {**_folder_metrics(Path(work)), **extra}
            _publish(Path(work), out, run.keep_files)
        record["status"] = "done"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(out / ERROR_FILE)
    except Exception as exc:  # noqa: BLE001 - reported in the table, never stops the sweep
        record["error"] = _describe(exc)
        with contextlib.suppress(OSError):
            out.mkdir(parents=True, exist_ok=True)
            write_text(out / ERROR_FILE, traceback.format_exc())
    record["timing"] = {
        "wall_time": time.perf_counter() - start,
        "cpu_time": time.process_time() - cpu,
        "host": socket.gethostname(),
    }
    if record["status"] == "done":
        write_json(out / RESULT_FILE, record, indent=1)  # the completion marker, last
    return record


def _publish(work: Path, out: Path, keep: tuple[str, ...] | None) -> None:
    """Copy the files of ``work`` matching ``keep`` (all if ``None``) into ``out``, each
    atomically."""
    for path in sorted(work.iterdir()):
        if not path.is_file():
            continue
        if keep is not None and not any(fnmatch.fnmatchcase(path.name, p) for p in keep):
            continue
        with open(path, "rb") as src, atomic_open(out / path.name, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)


def _classic_run(inputs: Any, work: Path) -> dict[str, Any]:
    from hdeeprm.experiment.run import run_classic

    result = run_classic(inputs, work)
    m = result.metrics
    return {
        "nb_completed": m.nb_completed,
        "nb_rejected": m.nb_rejected,
        "over_subscriptions": m.over_subscriptions,
        "decisions": m.decisions,
    }


def _learning_run(run: RunSpec, inputs: Any, work: Path) -> dict[str, Any]:
    from hdeeprm.training import run_learning

    result = run_learning(
        dataclasses.replace(inputs, output_dir=work),
        agent_file=Path(run.agent_file or ""),
        in_model=None,
        out_model=work / "model.pt",
        nb_runs=run.episodes,
        progress=False,
        tensorboard=False,
    )
    last = result.episodes[-1]
    return {
        "episodes": len(result.episodes),
        "total_reward": last.total_reward,
        "objective_value": last.objective,
    }


def _folder_metrics(folder: Path) -> dict[str, Any]:
    """The metrics ``hdeeprm-metrics`` reports, read back from the run's Batsim outputs."""
    from hdeeprm.analysis.metrics import as_records, summarize_run

    record = as_records([summarize_run(folder)])[0]
    record.pop("run")
    record.pop("path")
    return record
