"""CPU time of the core pool and the resource manager alone, on the calls of a real run.

Usage: ``python benchmarks/speed/pool_replay.py [--trace gaia] [--nb-jobs N|all] [--pair
shortest-high_gflops] [--scheduler easy] [--repeat 3] [--traces-dir DIR]``.

A whole-trace simulation spends a third to a half of its CPU time in the decision system's
resource state (:mod:`hdeeprm.decision.resources`, :mod:`hdeeprm.decision.resource_manager`,
:mod:`hdeeprm.decision.fit`), but the engine, the queue and the machine's load move a whole
run's CPU time by 5-15% between identical runs, which hides most changes to that state. This
runs the trace once through the workload manager while recording every call the manager makes
on the pool (``ResourceManager.allocate``, ``CorePool.release``, ``CorePool.drain``,
``CorePool.take``/``settle`` for cores a scheduler chose, ``NodeFloorFit.fits``/``tasks``),
then replays those calls ``--repeat`` times on a fresh pool and resource manager and prints the
CPU time of each replay. The first replay also checks that every answer is the one the run got
(allocations, P-state decisions, fit answers, over-subscription episodes), so a change that
altered a result fails here before any timing.

Compare two versions of the code by running this with ``PYTHONPATH`` at each, alternately.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling import DEFAULT_TRACES, TRACES, load_inputs  # noqa: E402


def record(
    trace: str, size: str, pair: str, scheduler: str | None, traces_dir: Path | None
) -> tuple[Any, list[tuple], dict]:
    """Run the trace once; return the platform, the calls made on the pool and the random
    core stream's starting state."""
    import copy

    from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
    from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
    from hdeeprm.simulation import Engine, run

    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        platform, sim_platform, workload = load_inputs(trace, size, traces_dir, Path(tmp))
    actions = ActionSpace()
    sched = BackfillScheduler(parse_scheduler(scheduler)) if scheduler else None
    manager = WorkloadManager(platform, actions, FixedPair(actions, pair), seed=1, scheduler=sched)
    pool, rm, floor = manager.pool, manager.resource_manager, manager._floor_fit
    rng_state = copy.deepcopy(rm.rng.bit_generator.state)
    calls: list[tuple] = []
    depth = [0]  # calls made by the resource manager itself are not the manager's

    def wrap(obj: Any, name: str, tag: str, convert: Any = None) -> None:
        method = getattr(obj, name)

        def wrapper(*args: Any) -> Any:
            outer = not depth[0]
            depth[0] += 1
            try:
                result = method(*args)
            finally:
                depth[0] -= 1
            if outer:
                kept = tuple(list(a) if isinstance(a, (list, tuple)) else a for a in args)
                calls.append((tag, kept, convert(result) if convert else result))
            return result

        setattr(obj, name, wrapper)

    wrap(rm, "allocate", "allocate", lambda r: None if r is None else list(r))
    wrap(pool, "release", "release")
    wrap(pool, "take", "take")
    wrap(pool, "settle", "settle")
    wrap(pool, "drain", "drain", lambda r: [(tuple(d.resources), d.state) for d in r])
    wrap(floor, "fits", "fits")
    wrap(floor, "tasks", "tasks")
    engine = Engine(sim_platform, workload, trace=False)
    run(engine, manager)
    return platform, calls, {"rng": rng_state, "episodes": list(pool.episodes)}


def replay(platform: Any, calls: list[tuple], start: dict, check: bool) -> float:
    """Replay ``calls`` on a fresh pool; CPU seconds of the replay (checking every answer
    against the recorded one when ``check``)."""
    import numpy as np

    from hdeeprm.decision.fit import NodeFloorFit
    from hdeeprm.decision.resource_manager import ResourceManager
    from hdeeprm.decision.resources import CorePool

    pool = CorePool(platform)
    rng = np.random.default_rng()
    rng.bit_generator.state = start["rng"]
    rm = ResourceManager(pool, rng)
    floor = NodeFloorFit(pool)
    methods = {
        "allocate": rm.allocate,
        "release": pool.release,
        "take": pool.take,
        "settle": pool.settle,
        "drain": pool.drain,
        "fits": floor.fits,
        "tasks": floor.tasks,
    }
    if check:
        for i, (tag, args, expected) in enumerate(calls):
            got = methods[tag](*args)
            if tag == "allocate" and got is not None:
                got = list(got)
            elif tag == "drain":
                got = [(tuple(d.resources), d.state) for d in got]
            if got != expected:
                sys.exit(f"call {i} ({tag}{args!r}): got {got!r}, recorded {expected!r}")
        if list(pool.episodes) != start["episodes"]:
            sys.exit("over-subscription episodes differ from the run's")
        return 0.0
    bound = [(methods[tag], args) for tag, args, _ in calls]
    c0 = time.process_time()
    for method, args in bound:
        method(*args)
    return time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="gaia", choices=sorted(TRACES))
    parser.add_argument("--nb-jobs", default="all")
    parser.add_argument("--pair", default="shortest-high_gflops")
    parser.add_argument("--scheduler", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--traces-dir", type=Path, default=DEFAULT_TRACES)
    args = parser.parse_args(argv)
    platform, calls, start = record(
        args.trace, args.nb_jobs, args.pair, args.scheduler, args.traces_dir
    )
    replay(platform, calls, start, check=True)
    counts: dict[str, int] = {}
    for tag, _, _ in calls:
        counts[tag] = counts.get(tag, 0) + 1
    print(
        f"{args.trace} {args.nb_jobs} {args.pair} {args.scheduler or 'blocking'}: "
        + ", ".join(f"{n} {tag}" for tag, n in sorted(counts.items()))
        + " (answers checked)"
    )
    times = [replay(platform, calls, start, check=False) for _ in range(args.repeat)]
    print("replay CPU s: " + " ".join(f"{t:.3f}" for t in times) + f" (min {min(times):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
