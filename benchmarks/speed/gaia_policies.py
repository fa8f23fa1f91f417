"""Whole Gaia trace on the Gaia platform with a classic policy pair, timed by stage.

Usage: ``python benchmarks/speed/gaia_policies.py [PAIR ...] [--nb-jobs N] [--profile]``
(default pair ``shortest-high_gflops``). Prints wall time for conversion (SWF -> workload,
platform -> platform.xml), simulation and output writing, plus decisions/s and jobs/s.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.simulation import Engine, load_platform_xml, run, write_outputs
from hdeeprm.workload.convert import convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)
PLATFORM = REPO / "platform_examples" / "gaia.json"


def bench(pair: str, nb_jobs: int | None, profile: bool, seed: int = 1) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        platform = load_platform(PLATFORM)
        write_platform_xml(platform, out / "platform.xml")
        sim_platform = load_platform_xml(out / "platform.xml")
        converted = convert_swf(
            TRACE,
            reference_speed=platform.reference_speed,
            max_cores=len(platform.cores),
            seed=seed,
            nb_jobs=nb_jobs,
        )
        workload = converted.workload
        t1 = time.perf_counter()

        actions = ActionSpace()
        manager = WorkloadManager(platform, actions, FixedPair(actions, pair), seed=seed)
        engine = Engine(sim_platform, workload, trace=True)
        profiler = cProfile.Profile() if profile else None
        if profiler:
            profiler.enable()
        deciding = run(engine, manager)
        if profiler:
            profiler.disable()
        t2 = time.perf_counter()
        write_outputs(engine, out)
        t3 = time.perf_counter()

    simulation = t2 - t1
    jobs = len(engine.finished_jobs)
    makespan = max((job.finish_time or 0.0 for job in engine.finished_jobs), default=0.0)
    print(f"pair                 {pair}")
    print(
        f"platform             {len(platform.cores)} cores, {len(platform.processors)} "
        f"processors, {len(platform.nodes)} nodes"
    )
    print(
        f"jobs                 {len(workload.jobs)} submitted, {jobs} ended, "
        f"{len(manager.rejected)} rejected"
    )
    print(f"conversion           {t1 - t0:8.2f} s")
    print(
        f"simulation           {simulation:8.2f} s  (deciding {deciding:.2f} s, engine "
        f"{simulation - deciding:.2f} s)"
    )
    print(f"outputs              {t3 - t2:8.2f} s")
    print(f"total                {t3 - t0:8.2f} s")
    print(
        f"decision points      {manager.nb_decisions}  ({manager.nb_decisions / simulation:,.0f}/s)"
    )
    print(f"messages             {engine.nb_messages}")
    print(f"jobs/s               {jobs / simulation:,.0f}")
    print(
        f"makespan             {makespan:,.0f} s simulated; energy "
        f"{engine.consumed_energy / 3.6e9:,.1f} MWh"
    )
    print(f"over-subscriptions   {len(manager.episodes)} episodes")
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="*", default=["shortest-high_gflops"])
    parser.add_argument("--nb-jobs", type=int, default=None, help="first N usable jobs only")
    parser.add_argument("--profile", action="store_true", help="cProfile the simulation")
    args = parser.parse_args(argv)
    if not TRACE.is_file():
        print(common.missing_message(common.GAIA), file=sys.stderr)
        return 1
    for pair in args.pairs:
        bench(pair, args.nb_jobs, args.profile)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
