"""EASY backfilling on whole traces, timed: RICC (447,794 jobs, 8,192 cores) and LCG.

Usage: ``python benchmarks/speed/easy_backfilling.py [TRACE ...] [--scheduler SPEC] [--nb-jobs N]
[--baseline] [--profile] [--profile-out FILE] [--breakdown] [--questions] [--keep-out DIR]``
with TRACE
among ``ricc``, ``lcg``, ``kth``, ``gaia`` (default ``ricc lcg``) and SPEC a preset
(``easy``, ``easy++``, ...) or a JSON object. Prints conversion, simulation (deciding vs
engine) and output times, decision points and backfilled jobs; ``--baseline`` also runs the
blocking ``first-high_gflops`` pair on the same workload; ``--keep-out DIR`` keeps each run's
``out_jobs.csv`` as ``DIR/<trace>_<N or all>_<run>.csv`` (to compare results before and
after a change, bit for bit); ``--profile-out FILE`` saves the cProfile statistics
(``pstats`` format) of the last run for a closer look; ``--breakdown`` prints the share of
the simulation spent in the scheduler's own code, apart from the placements it asks the
resource manager for (EASY's own share; the rest is shared with the blocking path);
``--questions`` counts the work behind the simulation (the scheduler's questions and refusals,
the fit counts' recounts, the core pool's takes, releases, settles and P-state changes, the
ranked tree's updates and searches) by wrapping those methods: the same figures on every
machine, so a change's effect on them can be quoted exactly (the run is slower: its times are
not the benchmark's).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.simulation import Engine, load_platform_xml, run, write_outputs
from hdeeprm.workload.convert import convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CASES = {
    "ricc": ("RICC-2010-2.swf.gz", "ricc.json"),
    "lcg": ("LCG.swf.gz", "lcg.json"),
    "kth": ("KTH-SP2-1996-2.1-cln.swf.gz", "kth_sp2.json"),
    "gaia": ("UniLu-Gaia-2014-1.swf.gz", "gaia.json"),
}


class WorkCounter:
    """Counts of the work a run does, from wrapped methods (``--questions``): the scheduler's
    questions to the workload manager (``fits_now``, ``fit_capacity``, refusals), the fit
    counts brought up to date (``catch_up``: calls, log entries read, nodes recounted), the
    placements, and the core pool and ranked tree operations behind them. Instance methods are
    wrapped on the objects of this run; the fit counts and the tree are wrapped on their
    classes until :meth:`restore`."""

    def __init__(self, manager: WorkloadManager, sched: BackfillScheduler | None) -> None:
        from hdeeprm.decision import _segment, fit

        self.counts: dict[str, int] = {}
        counts = self.counts
        self._restore: list[tuple[Any, str, Any]] = []

        def bump(key: str, by: int = 1) -> None:
            counts[key] = counts.get(key, 0) + by

        def wrap(owner: Any, name: str, key: str, extra: Any = None, result: Any = None) -> None:
            method = getattr(owner, name)
            if isinstance(owner, type):
                self._restore.append((owner, name, owner.__dict__[name]))

            def call(*args: Any) -> Any:
                bump(key)
                if extra is not None:
                    extra(*args)
                answer = method(*args)
                if result is not None:
                    result(answer)
                return answer

            setattr(owner, name, call)

        pool = manager.pool

        def log_read(counts_self: Any, _pool: Any, log: Any, *rest: Any) -> None:
            seg = log.nodes[counts_self.pos - log.base :]
            bump("fit counts: log entries read", len(seg))
            bump("fit counts: nodes recounted", len(set(seg)))

        def refused(answer: bool) -> None:
            if not answer:
                bump("fits_now refused")

        wrap(manager, "fits_now", "fits_now questions", result=refused)
        wrap(manager, "fit_capacity", "fit_capacity counts")
        wrap(fit._FloorCounts, "catch_up", "fit counts: catch_up calls", log_read)
        wrap(manager.resource_manager, "allocate", "allocations asked")
        wrap(
            pool,
            "take_run",
            "pool: processor runs taken",
            lambda *a: bump("pool: cores taken", a[1]),
        )
        wrap(pool, "release", "pool: releases", lambda c, _n: bump("pool: cores released", len(c)))
        wrap(
            pool, "_settle", "pool: settles", lambda t, *_: bump("pool: processors settled", len(t))
        )
        wrap(
            pool, "drain", "pool: drains", lambda: bump("pool: cores switched", len(pool._changed))
        )
        wrap(
            _segment.MaxTree,
            "set_many",
            "tree: set_many",
            lambda _t, s, _v: bump("tree: slots written", len(s)),
        )
        wrap(_segment.MaxTree, "leftmost_from", "tree: leftmost_from")
        if sched is not None:

            def tried(answer: bool) -> None:
                if not answer:
                    bump("scheduler: refused starts")

            wrap(sched, "_try", "scheduler: starts tried", result=tried)

    def restore(self) -> None:
        for owner, name, method in self._restore:
            setattr(owner, name, method)

    def report(self) -> str:
        width = max(map(len, self.counts), default=0)
        return "\n".join(f"      {k:<{width}} {v:>14,}" for k, v in sorted(self.counts.items()))


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
    questions: bool = False,
) -> None:
    trace_name, platform_name = CASES[case]
    trace = common.trace_default(trace_name)
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
                FixedPair(actions, "first-high_gflops"),
                seed=1,
                scheduler=sched,
            )
            clock = SchedulerClock(sched) if breakdown and sched is not None else None
            counter = WorkCounter(manager, sched) if questions else None
            # Outputs only, as hdeeprm-launch's classic runs: no per-host energies.
            engine = Engine(sim_platform, workload, host_energies=False)
            profiler = cProfile.Profile() if profile else None
            if profiler:
                profiler.enable()
            t2, c2 = time.perf_counter(), time.process_time()
            deciding = run(engine, manager)
            t3, c3 = time.perf_counter(), time.process_time()
            if profiler:
                profiler.disable()
            if counter is not None:
                counter.restore()
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
            print(f"    peak RSS     {common.peak_rss_mib():,.0f} MiB (this process so far)")
            if counter is not None:
                print("    work counted (--questions; this run's times include the counting)")
                print(counter.report())
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
    parser.add_argument(
        "--questions",
        action="store_true",
        help="count the scheduler's questions and the resource state's work (slower run)",
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
            args.questions,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
