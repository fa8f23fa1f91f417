"""Thesis chapter 4 on KTH-SP2: EASY, EASY-clairvoyant and the heuristic triples (Tables 4.1,
4.6, 4.7), on hdeeprm's embedded engine with the literature's homogeneous setting.

Usage::

    python thesis_experiments/easy/reproduce.py [--triples] [--losses] [--trace FILE]
    python thesis_experiments/easy/reproduce.py --tune [--tune-jobs 10000]

Prints one line per heuristic: AVEbsld (tau = 10 s, every converted job), max bsld, mean and
max wait, and the thesis's value where it has one. ``--triples`` adds every (correction,
variant) with the E-Loss regression and AVE2; ``--losses`` runs all 20 loss/weight
combinations x 3 corrections x 2 variants (120 runs, about 20 minutes on 2 cores).

``--tune`` searches the E-Loss regression's learning rate ``eta`` and L2 strength of the best
triple (E-Loss, incremental, EASY-SJBF) on the first ``--tune-jobs`` jobs of the trace only
(the *tuning part*), then runs the chosen pair and the default one on the whole trace and
prints AVEbsld over every job and over the jobs after the tuning part (held out).

Setting: ``platform_examples/kth_sp2.json`` (100 identical cores, so the placement does not
change run times), the cleaned trace converted by hdeeprm (every job with a positive run time;
28,467 jobs), memory bandwidth draws set to 0.001 GB/s so no processor is ever over-subscribed
(the literature has no bandwidth model) and no walltime (jobs run their recorded time even past
their request, as in the thesis's simulator).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

from hdeeprm.agents import ClassicAgent
from hdeeprm.analysis.metrics import job_metrics
from hdeeprm.decision import ActionSpace, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.scheduling.config import E_LOSS, LOSS_BASES, WEIGHTS
from hdeeprm.scheduling.regression import OnlineRegression
from hdeeprm.simulation import Engine, load_platform_xml, run
from hdeeprm.workload.convert import convert_swf

REPO = Path(__file__).resolve().parents[2]
TRACES = Path(os.environ.get("HDEEPRM_TRACES", REPO.parent / "shared" / "traces"))
if not TRACES.is_dir():
    TRACES = Path("/work/shared/traces")
TRACE = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
PLATFORM = REPO / "platform_examples" / "kth_sp2.json"

#: name -> (scheduler options, thesis AVEbsld on KTH-SP2 or None)
HEADLINE: dict[str, tuple[object, float | None]] = {
    "EASY": ("easy", 92.6),
    "EASY-clairvoyant": ("easy-clairvoyant", 71.7),
    "EASY-SJBF-clairvoyant": ({"preset": "easy-sjbf", "predictor": "clairvoyant"}, 49.8),
    "EASY++": ("easy++", 63.5),
    "thesis-best (E-Loss, incremental, SJBF)": ("thesis-best", 51.4),
}


def triples() -> dict[str, tuple[object, float | None]]:
    out: dict[str, tuple[object, float | None]] = {}
    for predictor in ("ave2", "regression"):
        for correction in ("requested", "incremental", "doubling"):
            for variant in ("easy", "easy-sjbf"):
                name = f"{predictor}/{correction}/{variant}"
                out[name] = (
                    {"variant": variant, "predictor": predictor, "correction": correction},
                    None,
                )
    return out


def losses() -> dict[str, tuple[object, float | None]]:
    out: dict[str, tuple[object, float | None]] = {}
    for over, under, weight in itertools.product(LOSS_BASES, LOSS_BASES, WEIGHTS):
        for correction in ("requested", "incremental", "doubling"):
            for variant in ("easy", "easy-sjbf"):
                name = f"{over}/{under}/{weight}/{correction}/{variant}"
                out[name] = (
                    {
                        "variant": variant,
                        "predictor": "regression",
                        "correction": correction,
                        "loss": {"over": over, "under": under, "weight": weight},
                    },
                    None,
                )
    return out


#: The search grid of ``--tune``: NAG learning rates (s) x L2 strengths; the defaults of
#: :class:`OnlineRegression` are eta = 50, l2 = 1e-6.
TUNE_ETAS = (5.0, 15.0, 50.0, 150.0, 500.0)
TUNE_L2S = (1e-6, 1e-4, 1e-2)
BEST_TRIPLE = {"variant": "easy-sjbf", "predictor": "regression", "correction": "incremental"}


def inputs(trace: Path, nb_jobs: int | None = None) -> tuple[object, object, object]:
    """(platform, simulator platform, workload) of the literature's setting."""
    platform = load_platform(PLATFORM)
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "platform.xml"
        write_platform_xml(platform, xml)
        sim_platform = load_platform_xml(xml)
    workload = convert_swf(
        trace,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
        nb_jobs=nb_jobs,
        mem_bw_range=(0.001, 0.001),
    ).workload
    return platform, sim_platform, workload


def simulate_once(
    platform: object, sim_platform: object, workload: object, spec: object, predictor=None
) -> list:
    """One run; the finished engine jobs."""
    actions = ActionSpace()
    sched = BackfillScheduler(parse_scheduler(spec), predictor)
    manager = WorkloadManager(
        platform, actions, ClassicAgent(actions, "first-high_gflops"), seed=1, scheduler=sched
    )
    engine = Engine(sim_platform, workload)
    run(engine, manager)
    return engine.finished_jobs


def avebsld(jobs: list, keep=lambda job: True) -> float:
    kept = [j for j in jobs if keep(j)]
    return job_metrics(
        [j.spec.subtime for j in kept], [j.start_time for j in kept], [j.finish_time for j in kept]
    ).mean_bounded_slowdown


def tune(trace: Path, tune_jobs: int) -> int:
    """The ``--tune`` search (see the module docstring)."""
    platform, sim_platform, part = inputs(trace, tune_jobs)
    print(f"tuning part: the first {len(part.jobs)} jobs; best triple {BEST_TRIPLE}")
    print(f"{'eta':>8s} {'l2':>8s} {'AVEbsld (tuning part)':>22s}")
    results: dict[tuple[float, float], float] = {}
    for eta in TUNE_ETAS:
        for l2 in TUNE_L2S:
            jobs = simulate_once(
                platform, sim_platform, part, BEST_TRIPLE, OnlineRegression(E_LOSS, eta, l2)
            )
            results[(eta, l2)] = avebsld(jobs)
            print(f"{eta:8g} {l2:8g} {results[(eta, l2)]:22.2f}", flush=True)
    chosen = min(results, key=lambda k: (results[k], k))
    print(f"chosen on the tuning part: eta = {chosen[0]:g}, l2 = {chosen[1]:g}")
    platform, sim_platform, whole = inputs(trace)
    held = {spec.id for spec in whole.jobs[len(part.jobs) :]}
    print(f"{'eta':>8s} {'l2':>8s} {'AVEbsld (whole)':>16s} {'held-out jobs':>14s}")
    for eta, l2 in dict.fromkeys([chosen, (50.0, 1e-6)]):
        jobs = simulate_once(
            platform, sim_platform, whole, BEST_TRIPLE, OnlineRegression(E_LOSS, eta, l2)
        )
        out = avebsld(jobs), avebsld(jobs, lambda j: j.spec.id in held)
        print(f"{eta:8g} {l2:8g} {out[0]:16.2f} {out[1]:14.2f}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--triples", action="store_true")
    parser.add_argument("--losses", action="store_true")
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--tune-jobs", type=int, default=10000)
    args = parser.parse_args(argv)
    if not args.trace.is_file():
        print(f"trace not found: {args.trace}", file=sys.stderr)
        return 1
    if args.tune:
        return tune(args.trace, args.tune_jobs)
    platform = load_platform(PLATFORM)
    configs = dict(HEADLINE)
    if args.triples:
        configs.update(triples())
    if args.losses:
        configs.update(losses())
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "platform.xml"
        write_platform_xml(platform, xml)
        sim_platform = load_platform_xml(xml)
        workload = convert_swf(
            args.trace,
            reference_speed=platform.reference_speed,
            max_cores=len(platform.cores),
            seed=1,
            mem_bw_range=(0.001, 0.001),
        ).workload
    print(f"KTH-SP2: {len(workload.jobs)} jobs on {len(platform.cores)} cores")
    print(
        f"{'heuristic':58s} {'AVEbsld':>8s} {'thesis':>7s} {'diff':>7s} {'max bsld':>9s} "
        f"{'mean wait':>9s} {'max wait':>9s} {'sim s':>6s}"
    )
    for name, (spec, thesis) in configs.items():
        actions = ActionSpace()
        sched = BackfillScheduler(parse_scheduler(spec))
        manager = WorkloadManager(
            platform, actions, ClassicAgent(actions, "first-high_gflops"), seed=1, scheduler=sched
        )
        engine = Engine(sim_platform, workload)
        t0 = time.perf_counter()
        run(engine, manager)
        wall = time.perf_counter() - t0
        jobs = engine.finished_jobs
        m = job_metrics(
            [j.spec.subtime for j in jobs],
            [j.start_time for j in jobs],
            [j.finish_time for j in jobs],
        )
        ref = f"{thesis:7.1f}" if thesis is not None else f"{'':7s}"
        diff = (
            f"{100 * (m.mean_bounded_slowdown - thesis) / thesis:+6.1f}%"
            if thesis is not None
            else f"{'':7s}"
        )
        print(
            f"{name:58s} {m.mean_bounded_slowdown:8.1f} {ref} {diff} "
            f"{m.max_bounded_slowdown:9.0f} {m.mean_waiting:9.0f} {m.max_waiting:9.0f} "
            f"{wall:6.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
