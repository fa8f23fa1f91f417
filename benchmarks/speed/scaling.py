"""Does a classic replay stay linear as traces grow? Jobs/s on prefixes of big, loaded traces.

Usage: ``python benchmarks/speed/scaling.py [--traces ricc,lcg,gaia] [--sizes 10000,20000,40000,all]
[--pair shortest-high_gflops] [--scheduler easy] [--gaia-ratio] [--traces-dir DIR]
[--keep-out DIR]`` (without ``--traces-dir``, each trace is looked up as ``hdeeprm-traces path
NAME`` does: ``$HDEEPRM_TRACES``, then the trace cache).

For each trace and each prefix (the first N usable jobs, or ``all``), one subprocess converts
the trace, replays it on the embedded engine with the workload manager and one classic policy
pair (with ``--scheduler``, a backfilling scheduler of :mod:`hdeeprm.scheduling` chooses the
jobs and the pair's core policy places them: issue 14's EASY goal), and writes the outputs
(Batsim's and ``hdeeprm_mem_bw_overutilization.csv``, as ``hdeeprm-launch`` does); running each
size in its own process makes its peak RSS honest. The pair decides through ``FixedPair``, as in
``hdeeprm-launch`` (torch is never imported), and full garbage collections are suspended from
the engine's build through the outputs, as ``run_classic`` does (:mod:`hdeeprm._gc`).
Printed per run: jobs, events, wall time (conversion + simulation + outputs), the simulation's
share and the deciding share, the process's CPU time (wall much above it means the machine was
busy with something else), jobs/s and events/s of the simulation, microseconds per job, peak
RSS, and the CPU of the input phase (platform and trace conversion) and of the output phase.
Then the issue's goals (issue 17): cost per job flat within 2x from the first 10k jobs to the
whole trace; whole RICC and whole LCG under 60 s; peak RSS under 2 GB.

``--gaia-ratio`` (issue 14) also replays the whole Gaia trace twice in one subprocess, on the
same converted workload: with the engine's first-fit FCFS (``benchmarks/speed/engine_replay.py``'s
``AllP0FCFS``, no decision system) and with the workload manager and the pair, and prints the
ratio of their CPU times (goal: 2x at most).

``--keep-out DIR`` keeps each run's outputs as ``DIR/<trace>_<size>_<name>`` (``out_jobs.csv``,
the other Batsim outputs and ``hdeeprm_mem_bw_overutilization.csv``; to compare results before
and after a change, bit for bit).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: ``--traces-dir`` when not given: look each trace up through :mod:`hdeeprm.workload.archive`.
DEFAULT_TRACES = None
TRACES = {
    "ricc": ("RICC-2010-2.swf.gz", "ricc.json"),
    "lcg": ("LCG.swf.gz", "lcg.json"),
    "gaia": ("UniLu-Gaia-2014-1.swf.gz", "gaia.json"),
}
#: Issue 17's goals.
FLAT_RATIO = 2.0
WHOLE_TRACE_SECONDS = {"ricc": 60.0, "lcg": 60.0}
PEAK_RSS_MIB = 2048.0
#: Issue 35's goal: the decision system's replay at most this many times first-fit's.
GAIA_RATIO = 2.0


def trace_file(trace: str, traces_dir: Path | None) -> Path:
    """The SWF file of short name ``trace`` (exits saying how to get it when absent)."""
    return common.require_trace(TRACES[trace][0], traces_dir)


def load_inputs(trace: str, size: str, traces_dir: Path | None, out: Path) -> tuple:
    """The platform, the engine's platform (through a written ``platform.xml`` in ``out``) and
    the first ``size`` jobs (or ``all``) of ``trace``, converted as every replay here does."""
    from hdeeprm.platform import load_platform, write_platform_xml
    from hdeeprm.simulation import load_platform_xml
    from hdeeprm.workload.convert import convert_swf

    platform_file = TRACES[trace][1]
    platform = load_platform(ROOT / "platform_examples" / platform_file)
    write_platform_xml(platform, out / "platform.xml")
    sim_platform = load_platform_xml(out / "platform.xml")
    workload = convert_swf(
        trace_file(trace, traces_dir),
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
        nb_jobs=None if size == "all" else int(size),
    ).workload
    return platform, sim_platform, workload


def child(
    trace: str,
    size: str,
    pair: str,
    traces_dir: Path | None,
    keep: Path | None,
    scheduler: str | None = None,
) -> dict:
    """One run in this process; returns its figures (printed as JSON by ``--child``).

    The pair decides through :class:`~hdeeprm.decision.FixedPair`, as ``hdeeprm-launch``'s
    classic runs do: ``hdeeprm.agents`` imports torch (about 1.2 s and 190 MiB), which a
    classic replay never needs."""
    from hdeeprm._gc import young_collections_only
    from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
    from hdeeprm.experiment.run import write_overutilization
    from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
    from hdeeprm.simulation import Engine, run, write_outputs

    # Bandwidth over-subscription warnings would go to stderr through logging's last resort
    # (a user run writes them to insights.log): not what is measured here.
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        c0 = time.process_time()
        platform, sim_platform, workload = load_inputs(trace, size, traces_dir, out)
        t1 = time.perf_counter()
        c1 = time.process_time()
        actions = ActionSpace()
        sched = BackfillScheduler(parse_scheduler(scheduler)) if scheduler else None
        manager = WorkloadManager(
            platform, actions, FixedPair(actions, pair), seed=1, scheduler=sched
        )
        # Full collections suspended from the engine's build to the last output row, as in
        # hdeeprm-launch's run_classic.
        with young_collections_only():
            # Outputs only, as hdeeprm-launch's classic runs: no per-host energies.
            engine = Engine(sim_platform, workload, trace=True, host_energies=False)
            deciding = run(engine, manager)
            t2 = time.perf_counter()
            c2 = time.process_time()
            paths = write_outputs(engine, out / "out")
            over = write_overutilization(out / "out", manager)
            t3 = time.perf_counter()
            c3 = time.process_time()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            tag = f"_{scheduler}" if scheduler else ""
            for kept in [*paths.values(), over]:
                shutil.copyfile(kept, keep / f"{trace}_{size}{tag}_{kept.name}")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = usage.ru_maxrss / 1024  # Linux: KiB
    return {
        "trace": trace,
        "size": size,
        "jobs": len(workload.jobs),
        "events": engine.nb_events,
        "wall": t3 - t0,
        "simulation": t2 - t1,
        "deciding": deciding,
        "sim_cpu": c2 - c1,
        "setup_cpu": c1 - c0,
        "out_cpu": c3 - c2,
        "rss_mib": peak,
        "cpu": usage.ru_utime + usage.ru_stime,
    }


def gaia_ratio(pair: str, traces_dir: Path | None) -> dict:
    """CPU seconds of the whole Gaia trace replayed by the engine's first-fit FCFS and by the
    workload manager with ``pair``, on one converted workload in this process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from engine_replay import AllP0FCFS

    from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
    from hdeeprm.platform import load_platform, write_platform_xml
    from hdeeprm.simulation import Engine, load_platform_xml, run
    from hdeeprm.workload.convert import convert_swf

    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    platform_file = TRACES["gaia"][1]
    with tempfile.TemporaryDirectory() as tmp:
        platform = load_platform(ROOT / "platform_examples" / platform_file)
        write_platform_xml(platform, Path(tmp) / "platform.xml")
        sim_platform = load_platform_xml(Path(tmp) / "platform.xml")
    workload = convert_swf(
        trace_file("gaia", traces_dir),
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
    ).workload
    c0 = time.process_time()
    engine = Engine(sim_platform, workload, trace=True)
    run(engine, AllP0FCFS())
    c1 = time.process_time()
    actions = ActionSpace()
    manager = WorkloadManager(platform, actions, FixedPair(actions, pair), seed=1)
    engine = Engine(sim_platform, workload, trace=True)
    deciding = run(engine, manager)
    c2 = time.process_time()
    return {
        "jobs": len(workload.jobs),
        "first_fit": c1 - c0,
        "manager": c2 - c1,
        "deciding": deciding,
    }


def measure(trace: str, size: str, args: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "--child", trace, size, "--pair", args.pair]
    if args.traces_dir is not None:
        command += ["--traces-dir", str(args.traces_dir)]
    if args.keep_out is not None:
        command += ["--keep-out", str(args.keep_out)]
    if args.scheduler:
        command += ["--scheduler", args.scheduler]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{trace} {size} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default="ricc,lcg,gaia")
    parser.add_argument("--sizes", default="10000,20000,40000,all")
    parser.add_argument("--pair", default="shortest-high_gflops")
    parser.add_argument("--traces-dir", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--keep-out", type=Path, default=None)
    parser.add_argument(
        "--scheduler", default=None, help="backfilling preset (easy, easy++, ...); none: blocking"
    )
    parser.add_argument(
        "--gaia-ratio", action="store_true", help="also time whole Gaia against first-fit FCFS"
    )
    parser.add_argument("--child", nargs=2, metavar=("TRACE", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--child-ratio", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        figures = child(*args.child, args.pair, args.traces_dir, args.keep_out, args.scheduler)
        print(json.dumps(figures))
        return 0
    if args.child_ratio:
        print(json.dumps(gaia_ratio(args.pair, args.traces_dir)))
        return 0

    traces = [t for t in args.traces.split(",") if t]
    for trace in traces:
        if trace not in TRACES:
            sys.exit(f"unknown trace {trace!r}; expected some of {sorted(TRACES)}")
        trace_file(trace, args.traces_dir)  # exits, saying how to get it, when absent
    mode = f"scheduler {args.scheduler}, core policy of " if args.scheduler else ""
    print(
        f"{mode}pair {args.pair}; wall = conversion + simulation + outputs; rates on the simulation"
    )
    print(
        f"{'trace':<6}{'size':>7}{'jobs':>8}{'events':>9}{'wall s':>8}{'sim s':>8}"
        f"{'decide s':>9}{'CPU s':>7}{'sim CPU':>8}{'jobs/s':>8}{'events/s':>10}{'us/job':>8}"
        f"{'CPU us/job':>11}{'RSS MiB':>9}{'in CPU':>8}{'out CPU':>8}"
    )
    verdicts: list[tuple[bool, str]] = []
    for trace in traces:
        rows = []
        for size in [s for s in args.sizes.split(",") if s]:
            row = measure(trace, size, args)
            rows.append(row)
            sim = row["simulation"]
            print(
                f"{trace:<6}{size:>7}{row['jobs']:>8}{row['events']:>9}{row['wall']:>8.2f}"
                f"{sim:>8.2f}{row['deciding']:>9.2f}{row['cpu']:>7.1f}"
                f"{row['sim_cpu']:>8.2f}{row['jobs'] / sim:>8.0f}"
                f"{row['events'] / sim:>10.0f}{sim / row['jobs'] * 1e6:>8.1f}"
                f"{row['sim_cpu'] / row['jobs'] * 1e6:>11.1f}"
                f"{row['rss_mib']:>9.0f}{row['setup_cpu']:>8.2f}{row['out_cpu']:>8.2f}",
                flush=True,
            )
        for label, field in (("wall", "simulation"), ("CPU", "sim_cpu")):
            per_job = [r[field] / r["jobs"] for r in rows]
            if len(per_job) > 1:
                ratio = max(per_job) / min(per_job)
                verdicts.append(
                    (
                        ratio <= FLAT_RATIO,
                        f"{trace}: cost per job ({label}) within {ratio:.2f}x "
                        f"over the sizes run (goal: {FLAT_RATIO:g}x)",
                    )
                )
        whole = [r for r in rows if r["size"] == "all"]
        if whole and trace in WHOLE_TRACE_SECONDS:
            limit, row = WHOLE_TRACE_SECONDS[trace], whole[0]
            for label, field in (("wall", "wall"), ("CPU", "cpu")):
                verdicts.append(
                    (
                        row[field] < limit,
                        f"{trace}: whole trace {row[field]:.1f} s {label} "
                        f"(goal: under {limit:g} s)",
                    )
                )
        verdicts.append(
            (
                max(r["rss_mib"] for r in rows) < PEAK_RSS_MIB,
                f"{trace}: peak RSS {max(r['rss_mib'] for r in rows):.0f} MiB (goal: under 2 GiB)",
            )
        )
    if args.gaia_ratio:
        command = [sys.executable, __file__, "--child-ratio", "--pair", args.pair]
        if args.traces_dir is not None:
            command += ["--traces-dir", str(args.traces_dir)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"gaia ratio failed:\n{done.stderr}")
        ratio = json.loads(done.stdout.splitlines()[-1])
        times = ratio["manager"] / ratio["first_fit"]
        print(
            f"whole Gaia ({ratio['jobs']} jobs), simulation CPU: engine first-fit FCFS "
            f"{ratio['first_fit']:.2f} s, workload manager with {args.pair} "
            f"{ratio['manager']:.2f} s (deciding {ratio['deciding']:.2f} s wall): {times:.2f}x"
        )
        verdicts.append(
            (times <= GAIA_RATIO, f"gaia: {times:.2f}x first-fit (goal: {GAIA_RATIO:g}x)")
        )
    print("goals (CPU = this process's CPU time, what wall time would be on an idle machine):")
    for met, text in verdicts:
        print(f"  {'met    ' if met else 'NOT met'}  {text}")
    return 0 if all(met for met, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
