"""EASY backfilling on whole traces, timed: RICC (447,794 jobs, 8,192 cores) and LCG.

Usage: ``python benchmarks/easy_backfilling.py [TRACE ...] [--scheduler SPEC] [--nb-jobs N]
[--baseline] [--profile] [--profile-out FILE] [--breakdown] [--keep-out DIR]`` with TRACE
among ``ricc``, ``lcg``, ``kth``, ``gaia`` (default ``ricc lcg``) and SPEC a preset
(``easy``, ``easy++``, ...) or a JSON object. Prints conversion, simulation (deciding vs
engine) and output times, decision points and backfilled jobs; ``--baseline`` also runs the
blocking ``first-high_gflops`` pair on the same workload; ``--keep-out DIR`` keeps each run's
``out_jobs.csv`` as ``DIR/<trace>_<N or all>_<run>.csv`` (to compare results before and
after a change, bit for bit); ``--profile-out FILE`` saves the cProfile statistics
(``pstats`` format) of the last run for a closer look; ``--breakdown`` prints the share of
the simulation spent in the scheduler's own code, apart from the placements it asks the
resource manager for (EASY's own share; the rest is shared with the blocking path).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hdeeprm.agents import ClassicAgent
from hdeeprm.decision import ActionSpace, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.simulation import Engine, load_platform_xml, run, write_outputs
from hdeeprm.workload.convert import convert_swf

REPO = Path(__file__).resolve().parent.parent
TRACES = Path(os.environ.get("HDEEPRM_TRACES", REPO.parent / "shared" / "traces"))
if not TRACES.is_dir():
    TRACES = Path("/work/shared/traces")
CASES = {
    "ricc": ("RICC-2010-2.swf.gz", "ricc.json"),
    "lcg": ("LCG.swf.gz", "lcg.json"),
    "kth": ("KTH-SP2-1996-2.1-cln.swf.gz", "kth_sp2.json"),
    "gaia": ("UniLu-Gaia-2014-1.swf.gz", "gaia.json"),
}


class SchedulerClock:
    """Time spent inside a scheduler's own code (``schedule``, ``submitted``, ``completed``),
    with the placements it asks for (``start``: the resource manager, shared with the blocking
    path) counted apart: EASY's own share of the simulation.

    The intervals are a few microseconds each, millions of them: a CPU clock
    (``process_time``, a system call) would cost more than what it measures, so they are
    read on ``perf_counter``; preemption by other processes falls into them in proportion to
    their length, so their *shares* of the simulation's wall time estimate the CPU shares."""

    def __init__(self, sched: BackfillScheduler) -> None:
        self.own = 0.0
        self.placing = 0.0
        clock = time.perf_counter
        schedule, submitted, completed = sched.schedule, sched.submitted, sched.completed

        def timed_schedule(now: float, free: Any, start: Any) -> None:
            def timed_start(record: Any) -> bool:
                tick = clock()
                try:
                    return start(record)
                finally:
                    self.placing += clock() - tick

            tick = clock()
            schedule(now, free, timed_start)
            self.own += clock() - tick

        def timed(method: Any) -> Any:
            def call(record: Any, now: float) -> None:
                tick = clock()
                method(record, now)
                self.own += clock() - tick

            return call

        sched.schedule = timed_schedule  # type: ignore[method-assign]
        sched.submitted = timed(submitted)  # type: ignore[method-assign]
        sched.completed = timed(completed)  # type: ignore[method-assign]


def bench(
    case: str,
    spec: object,
    nb_jobs: int | None,
    baseline: bool,
    profile: bool,
    keep: Path | None = None,
    profile_out: Path | None = None,
    breakdown: bool = False,
) -> None:
    trace_name, platform_name = CASES[case]
    trace = TRACES / trace_name
    platform_path = REPO / "platform_examples" / platform_name
    if not trace.is_file() or not platform_path.is_file():
        print(f"{case}: missing {trace if not trace.is_file() else platform_path}\n")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        platform = load_platform(platform_path)
        write_platform_xml(platform, out / "platform.xml")
        sim_platform = load_platform_xml(out / "platform.xml")
        workload = convert_swf(
            trace,
            reference_speed=platform.reference_speed,
            max_cores=len(platform.cores),
            seed=1,
            nb_jobs=nb_jobs,
        ).workload
        t1 = time.perf_counter()
        runs = [("EASY " + json.dumps(spec), spec)] + ([("blocking", None)] if baseline else [])
        print(
            f"{case}: {len(workload.jobs):,} jobs, {len(platform.cores):,} cores; "
            f"conversion {t1 - t0:.2f} s"
        )
        for label, sched_spec in runs:
            actions = ActionSpace()
            sched = BackfillScheduler(parse_scheduler(sched_spec)) if sched_spec else None
            manager = WorkloadManager(
                platform,
                actions,
                ClassicAgent(actions, "first-high_gflops"),
                seed=1,
                scheduler=sched,
            )
            clock = SchedulerClock(sched) if breakdown and sched is not None else None
            engine = Engine(sim_platform, workload)
            profiler = cProfile.Profile() if profile else None
            if profiler:
                profiler.enable()
            t2, c2 = time.perf_counter(), time.process_time()
            deciding = run(engine, manager)
            t3, c3 = time.perf_counter(), time.process_time()
            if profiler:
                profiler.disable()
            paths = write_outputs(engine, out)
            t4 = time.perf_counter()
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                tag = "easy" if sched_spec else "blocking"
                name = f"{case}_{nb_jobs or 'all'}_{tag}.csv"
                shutil.copyfile(paths["jobs"], keep / name)
            sim = t3 - t2
            waits = [
                j.start_time - j.spec.subtime
                for j in engine.finished_jobs
                if j.start_time is not None
            ]
            print(f"  {label}")
            print(
                f"    simulation   {sim:8.2f} s (deciding {deciding:.2f} s, engine "
                f"{sim - deciding:.2f} s); outputs {t4 - t3:.2f} s"
            )
            print(f"    simulation CPU {c3 - c2:6.2f} s")
            print(
                f"    decisions    {manager.nb_decisions:,} ({manager.nb_decisions / sim:,.0f}/s)"
                f"; jobs/s {len(engine.finished_jobs) / sim:,.0f}"
            )
            if sched is not None:
                print(
                    f"    backfilled   {sched.nb_backfilled:,}; corrections "
                    f"{sched.nb_corrections:,}"
                )
                print(
                    f"    passes       {sched.nb_passes:,}: backfilling walks of the queue "
                    f"{sched.nb_full_walks:,}, of the new jobs only {sched.nb_fresh_walks:,}; "
                    f"{sched.nb_examined:,} jobs tested against the reservation"
                )
            if clock is not None:
                own = (clock.own - clock.placing) / sim
                placing = clock.placing / sim
                print(
                    f"    scheduler    own code {own:.1%} of the simulation (about "
                    f"{own * (c3 - c2):.1f} s CPU), placements it asked for {placing:.1%}"
                )
            print(f"    mean wait    {sum(waits) / max(len(waits), 1):,.0f} s")
            if profiler:
                pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
                if profile_out is not None:
                    profiler.dump_stats(str(profile_out))
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", default=["ricc", "lcg"], choices=sorted(CASES))
    parser.add_argument("--scheduler", default="easy", help="preset name or JSON object")
    parser.add_argument("--nb-jobs", type=int, default=None)
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--keep-out", type=Path, default=None)
    parser.add_argument("--profile-out", type=Path, default=None)
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="time the scheduler's own code apart from the placements it asks for",
    )
    args = parser.parse_args(argv)
    # over-subscription warnings would go to stderr (no handler): not part of the timing
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    spec = json.loads(args.scheduler) if args.scheduler.startswith("{") else args.scheduler
    for case in args.traces:
        bench(
            case,
            spec,
            args.nb_jobs,
            args.baseline,
            args.profile or args.profile_out is not None,
            args.keep_out,
            args.profile_out,
            args.breakdown,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
