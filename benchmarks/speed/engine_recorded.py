"""The engine's own cost in a real run: replay recorded decisions through the engine alone.

Usage::

    python benchmarks/speed/engine_recorded.py record CASE FILE [--nb-jobs N]
    python benchmarks/speed/engine_recorded.py replay FILE [--rounds R] [--compare ROOT]
        [--no-host-energies]

``record`` runs CASE with hdeeprm's workload manager and saves, for every message, the
decisions it answered (gzip JSON lines; job ids, host ids and P-states only). ``replay``
rebuilds the same platform and workload, turns the saved answers back into decision objects,
then times (CPU time, ``time.process_time``) ``R`` replays of the engine alone: ``start()``
then one ``proceed(answer)`` per saved answer, no decision system. It prints the CPU seconds
of each round and a fingerprint of the results (makespan, energy, SHA-256 of every job's end
state, start, finish and energy, and of the host energies): two versions of the engine replaying
the same file must print the same fingerprint, and their CPU times compare the engines alone,
without the decision system's share (which moves by more than the engine's whole cost between
runs on a loaded machine). ``--no-host-energies`` builds the engines without per-host energies
(``Engine(..., host_energies=False)``, as the benchmarks that only write outputs do; an engine
without that option keeps them) and leaves them out of the fingerprint.

Cases:

* ``ricc-easy``: RICC with EASY backfilling and ``first-high_gflops`` (the engine share of
  ``benchmarks/speed/easy_backfilling.py ricc``), first ``--nb-jobs`` jobs (default 100,000);
* ``gaia``: the whole Gaia trace with ``shortest-high_gflops``
  (``benchmarks/speed/gaia_policies.py``);
* ``gaia-env``: the same, with the engine built as the Gymnasium environment builds it for
  objective rewards (``trace=False``, ``state_change_events=False``).

A recording is only valid for the version of the engine whose results it reproduces: make it
once (with either version, they must give the same outputs), replay it with both.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib
import json
import logging
import struct
import sys
import tempfile
import time
from inspect import signature
from pathlib import Path
from types import ModuleType
from typing import Any

from hdeeprm._gc import young_collections_only
from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.simulation import (
    CallMeLater,
    Decision,
    Engine,
    ExecuteJob,
    KillJobs,
    Message,
    RejectJob,
    SetResourceState,
    load_platform_xml,
)
from hdeeprm.simulation.events import HostIds
from hdeeprm.workload import Workload
from hdeeprm.workload.convert import convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
#: case -> (trace, platform, pair, EASY?, trace outputs, state-change events, default jobs)
CASES: dict[str, tuple[str, str, str, bool, bool, bool, int | None]] = {
    "ricc-easy": (
        "RICC-2010-2.swf.gz",
        "ricc.json",
        "first-high_gflops",
        True,
        True,
        True,
        100_000,
    ),
    "gaia": (
        "UniLu-Gaia-2014-1.swf.gz",
        "gaia.json",
        "shortest-high_gflops",
        False,
        True,
        True,
        None,
    ),
    "gaia-env": (
        "UniLu-Gaia-2014-1.swf.gz",
        "gaia.json",
        "shortest-high_gflops",
        False,
        False,
        False,
        None,
    ),
}


def build(case: str, nb_jobs: int | None) -> tuple[Any, Any, Workload]:
    """The case's platform (hierarchy), its SimGrid platform and its workload."""
    trace_name, platform_name, *_ = CASES[case]
    hierarchy = load_platform(REPO / "platform_examples" / platform_name)
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "platform.xml"
        write_platform_xml(hierarchy, xml)
        sim_platform = load_platform_xml(xml)
    workload = convert_swf(
        common.require_trace(trace_name),
        reference_speed=hierarchy.reference_speed,
        max_cores=len(hierarchy.cores),
        seed=1,
        nb_jobs=nb_jobs,
    ).workload
    return hierarchy, sim_platform, workload


def make_engine(case: str, sim_platform: Any, workload: Workload) -> Engine:
    _, _, _, _, trace, events, _ = CASES[case]
    return Engine(sim_platform, workload, trace=trace, state_change_events=events)


def encode(decision: Decision) -> list[Any]:
    """A decision as JSON: its kind's letter, then its fields."""
    kind = type(decision)
    if kind is ExecuteJob:
        alloc = decision.alloc  # type: ignore[union-attr]
        return ["E", decision.job_id, list(alloc), list(decision.gpus), type(alloc) is HostIds]  # type: ignore[union-attr]
    if kind is SetResourceState:
        hosts = decision.resources  # type: ignore[union-attr]
        return ["S", list(hosts), decision.state, type(hosts) is HostIds]  # type: ignore[union-attr]
    if kind is CallMeLater:
        return ["C", decision.timestamp]  # type: ignore[union-attr]
    if kind is RejectJob:
        return ["R", decision.job_id]  # type: ignore[union-attr]
    if kind is KillJobs:
        return ["K", list(decision.job_ids)]  # type: ignore[union-attr]
    raise TypeError(f"cannot record {decision!r}")


def decode(row: list[Any], events: ModuleType) -> Decision:
    """A recorded decision as an object of ``events`` (the version's own classes: the
    engine tells decisions apart by their exact type)."""
    kind = row[0]
    if kind == "E":
        # HostIds as the workload manager sent them (recordings without the flag: tuples)
        alloc = events.HostIds(row[2]) if len(row) > 4 and row[4] else tuple(row[2])
        return events.ExecuteJob(row[1], alloc, tuple(row[3]))  # type: ignore[no-any-return]
    if kind == "S":
        hosts = events.HostIds(row[1]) if row[3] else tuple(row[1])
        return events.SetResourceState(hosts, row[2])  # type: ignore[no-any-return]
    if kind == "C":
        return events.CallMeLater(row[1])  # type: ignore[no-any-return]
    if kind == "R":
        return events.RejectJob(row[1])  # type: ignore[no-any-return]
    return events.KillJobs(tuple(row[1]))  # type: ignore[no-any-return]


def record(case: str, path: Path, nb_jobs: int | None) -> None:
    hierarchy, sim_platform, workload = build(case, nb_jobs)
    _, _, pair, easy, *_ = CASES[case]
    actions = ActionSpace()
    manager = WorkloadManager(
        hierarchy,
        actions,
        FixedPair(actions, pair),
        seed=1,
        scheduler=BackfillScheduler(parse_scheduler("easy")) if easy else None,
    )
    engine = make_engine(case, sim_platform, workload)
    message: Message = engine.start()
    answers = 0
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(json.dumps({"case": case, "nb_jobs": nb_jobs}) + "\n")
        while True:
            decisions = list(manager.handle(message))
            if engine.finished:
                break
            out.write(json.dumps([encode(d) for d in decisions]) + "\n")
            answers += 1
            message = engine.proceed(decisions)
    print(f"{case}: {len(workload.jobs):,} jobs, {answers:,} answers -> {path}")
    print(f"fingerprint {fingerprint(engine)}")


def fingerprint(engine: Engine, hosts: bool = True) -> str:
    """Makespan, energy and a digest of every job's and (``hosts``) host's figures (bit for
    bit)."""
    digest = hashlib.sha256()
    for job in engine.finished_jobs:
        digest.update(job.id.encode())
        digest.update(job.state.encode())
        digest.update(
            struct.pack("<3d", job.start_time or -1.0, job.finish_time or -1.0, job.energy)
        )
        digest.update(struct.pack(f"<{len(job.alloc)}i", *job.alloc))
    if hosts:
        digest.update(struct.pack(f"<{engine.nb_hosts}d", *engine.host_energy()))
    for row in engine.energy_trace:
        digest.update(struct.pack("<2d", row[0], row[1]) + row[2].encode())
        digest.update(struct.pack("<d", row[3]))
    makespan = max((j.finish_time or 0.0 for j in engine.finished_jobs), default=0.0)
    return (
        f"makespan {makespan!r} energy {engine.consumed_energy!r} "
        f"time_idle {engine.time_idle!r} time_computing {engine.time_computing!r} "
        f"events {engine.nb_events} "
        f"sha256 {digest.hexdigest()[:16]}"
    )


def other_simulation(root: Path) -> ModuleType:
    """``hdeeprm.simulation`` of another checkout (``root``), imported beside this one: the
    modules of that copy live under their usual names only while it is imported."""
    saved = {name: mod for name, mod in sys.modules.items() if name.split(".")[0] == "hdeeprm"}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module("hdeeprm.simulation")
        importlib.import_module("hdeeprm.simulation.events")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == "hdeeprm"]:
            del sys.modules[name]
        sys.modules.update(saved)
    return module


def load_answers(path: Path) -> tuple[dict[str, Any], list[list[Any]]]:
    with gzip.open(path, "rt", encoding="utf-8") as source:
        meta = json.loads(source.readline())
        return meta, [json.loads(line) for line in source]


def replay(
    path: Path, rounds: int, compare: Path | None = None, host_energies: bool = True
) -> None:
    """Time the engine alone on the recorded answers; with ``compare``, alternate rounds
    with the engine of that checkout in this same process (same machine, same moment);
    without ``host_energies``, engines that have the option do not keep per-host energies."""
    meta, rows = load_answers(path)
    case = meta["case"]
    _, sim_platform, workload = build(case, meta["nb_jobs"])
    print(f"{case}: {len(workload.jobs):,} jobs, {len(rows):,} answers")
    logging.getLogger("hdeeprm.simulation").setLevel(logging.ERROR)
    versions: dict[str, ModuleType] = {}
    if compare is not None:
        versions["compared"] = other_simulation(compare)
    versions["this"] = sys.modules["hdeeprm.simulation"]
    _, _, _, _, trace, events, _ = CASES[case]
    answers = {
        name: [[decode(row, module.events) for row in answer] for answer in rows]
        for name, module in versions.items()
    }
    times: dict[str, list[float]] = {name: [] for name in versions}
    prints: dict[str, str] = {}
    for number in range(1, rounds + 1):
        for name, module in versions.items():
            options: dict[str, Any] = {"trace": trace, "state_change_events": events}
            if not host_energies and "host_energies" in signature(module.Engine).parameters:
                options["host_energies"] = False
            engine = module.Engine(sim_platform, [workload], **options)
            proceed = engine.proceed
            with young_collections_only():  # as hdeeprm.simulation.run does
                tick = time.process_time()
                engine.start()
                for decisions in answers[name]:
                    proceed(decisions)
                cpu = time.process_time() - tick
            times[name].append(cpu)
            print(f"round {number} {name}: engine CPU {cpu:.3f} s")
            if number == rounds:
                prints[name] = fingerprint(engine, hosts=host_energies)
            del engine, proceed
    for name, cpus in times.items():
        ordered = sorted(cpus)
        print(
            f"{name}: engine CPU min {ordered[0]:.3f} s, median {ordered[len(ordered) // 2]:.3f} s "
            f"over {len(cpus)} rounds"
        )
        print(f"{name}: fingerprint {prints[name]}")
    if compare is not None:
        print("same results" if len(set(prints.values())) == 1 else "RESULTS DIFFER")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("case", choices=sorted(CASES))
    rec.add_argument("file", type=Path)
    rec.add_argument("--nb-jobs", type=int, default=None)
    rep = sub.add_parser("replay")
    rep.add_argument("file", type=Path)
    rep.add_argument("--rounds", type=int, default=2)
    rep.add_argument(
        "--compare",
        type=Path,
        default=None,
        help="root of another checkout: alternate rounds with its engine, in this process",
    )
    rep.add_argument(
        "--no-host-energies",
        action="store_true",
        help="engines without per-host energies (where the engine has the option)",
    )
    args = parser.parse_args(argv)
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    if args.command == "record":
        nb_jobs = args.nb_jobs if args.nb_jobs is not None else CASES[args.case][6]
        record(args.case, args.file, nb_jobs)
    else:
        replay(args.file, args.rounds, args.compare, not args.no_host_energies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
