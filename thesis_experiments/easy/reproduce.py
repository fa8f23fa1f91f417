"""Thesis chapter 4 on KTH-SP2: EASY, EASY-clairvoyant and the heuristic triples (Tables 4.1,
4.6, 4.7), on hdeeprm's embedded engine with the literature's homogeneous setting.

Usage::

    python thesis_experiments/easy/reproduce.py [--triples] [--losses] [--trace FILE]
                                                [--csv NEW_FILE]
    python thesis_experiments/easy/reproduce.py --tune [--tune-jobs 10000]

Prints one line per heuristic: AVEbsld (tau = 10 s, every converted job), max bsld, mean and
max wait, the CPU seconds of the run, and the thesis's value where it has one (from
``thesis_kth_sp2.csv``: the authors' per-triple results behind Tables 4.1, 4.6 and 4.7).
``--triples`` adds every (correction, variant) with the E-Loss regression and AVE2;
``--losses`` runs all 20 loss/weight combinations x 3 corrections x 2 variants (120 runs) and
ends with the ranking agreement: Spearman's rank correlation of the triples' AVEbsld, thesis vs
ours. ``--csv`` also writes every line to a new CSV file (never overwriting one).
``--unfloored-weights`` keeps the loss weights that Table 4.3's formulas make negative (the
authors' simulator) instead of flooring them at 1e-3 (the thesis's "gamma_j > 0").

``--ablation`` runs the best triple with the regression's settings one at a time: the previous
defaults (eta = 50, L2 = 1e-6, negative outputs predicting 1 s), the authors' eta and L2, and
the two readings of a negative output (:data:`hdeeprm.scheduling.regression.OUTPUTS`).
``--table RESULTS_CSV`` prints the markdown table of the README from a ``--csv`` file of a
``--losses`` run (no simulation).

``--tune`` runs the best triple (E-Loss, incremental, EASY-SJBF) with the regression's learning
rate ``eta`` and L2 strength around their defaults (x 1/2 to 2 and x 1/10 to 10) on the first
``--tune-jobs`` jobs of the trace (the *tuning part*) and on the whole trace, and prints the
pair the tuning part chooses with its AVEbsld over every job and over the jobs after the tuning
part (held out): how much the result moves with hyper-parameters the thesis does not report.

Setting: ``platform_examples/kth_sp2.json`` (100 identical cores, so the placement does not
change run times), the cleaned trace converted by hdeeprm (every job with a positive run time;
28,467 jobs), memory bandwidth draws set to 0.001 GB/s so no processor is ever over-subscribed
(the literature has no bandwidth model) and no walltime (jobs run their recorded time even past
their request, as in the thesis's simulator).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import sys
import time
from pathlib import Path

from hdeeprm.analysis.metrics import job_metrics
from hdeeprm.comparison import load_setting
from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.scheduling.config import E_LOSS, LOSS_BASES, WEIGHTS
from hdeeprm.scheduling.regression import ETA, L2, OnlineRegression
from hdeeprm.simulation import Engine, run
from hdeeprm.workload.archive import find_trace, missing_message

REPO = Path(__file__).resolve().parents[2]
TRACE_NAME = "KTH-SP2-1996-2.1-cln.swf.gz"
#: Found in $HDEEPRM_TRACES or the trace cache (``hdeeprm-traces fetch`` puts it there).
TRACE = find_trace(TRACE_NAME) or Path(TRACE_NAME)
PLATFORM = REPO / "platform_examples" / "kth_sp2.json"
THESIS_CSV = Path(__file__).resolve().with_name("thesis_kth_sp2.csv")

#: name -> (scheduler options, thesis AVEbsld on KTH-SP2 or None)
HEADLINE: dict[str, tuple[object, float | None]] = {
    "EASY": ("easy", 92.6),
    "EASY-clairvoyant": ("easy-clairvoyant", 71.7),
    "EASY-SJBF-clairvoyant": ({"preset": "easy-sjbf", "predictor": "clairvoyant"}, 49.8),
    "EASY++": ("easy++", 63.5),
    "thesis-best (E-Loss, incremental, SJBF)": ("thesis-best", 51.4),
}


def thesis_values(path: Path = THESIS_CSV) -> dict[tuple[str, ...], float]:
    """(variant, predictor, over, under, weight, correction) -> the thesis's AVEbsld."""
    out: dict[tuple[str, ...], float] = {}
    with path.open(newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        for i, row in enumerate(rows):
            try:
                key = tuple(
                    row[k]
                    for k in ("variant", "predictor", "over", "under", "weight", "correction")
                )
                out[key] = float(row["avebsld"])
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(f"{path}: data row {i + 1}: {err!r}") from err
    return out


def thesis_key(spec: dict) -> tuple[str, ...]:
    """The :func:`thesis_values` key of a scheduler spec of :func:`triples` / :func:`losses`."""
    loss = spec.get("loss", {"over": "squared", "under": "linear", "weight": "large_area"})
    learned = spec["predictor"] == "regression"
    return (
        spec["variant"],
        spec["predictor"],
        loss["over"] if learned else "",
        loss["under"] if learned else "",
        loss["weight"] if learned else "",
        spec["correction"],
    )


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""

    def ranks(x: list[float]) -> list[float]:
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0.0] * len(x)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(va * vb) if va and vb else math.nan


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


#: The grid of ``--tune``: NAG learning rates x L2 strengths around the defaults of
#: :class:`OnlineRegression` (the authors' eta = 5000 sqrt(2) and l2 = 4e9).
TUNE_ETAS = tuple(ETA * f for f in (0.5, 1 / math.sqrt(2), 1.0, math.sqrt(2), 2.0))
TUNE_L2S = (L2 / 10, L2, L2 * 10)
BEST_TRIPLE = {"variant": "easy-sjbf", "predictor": "regression", "correction": "incremental"}


def inputs(trace: Path, nb_jobs: int | None = None) -> tuple[object, object, object]:
    """(platform, simulator platform, workload) of the literature's setting
    (:func:`hdeeprm.comparison.load_setting`: no bandwidth slow-down, no walltime)."""
    setting = load_setting(trace, PLATFORM, nb_jobs=nb_jobs)
    return setting.platform, setting.sim_platform, setting.workload


def simulate_once(
    platform: object, sim_platform: object, workload: object, spec: object, predictor=None
) -> list:
    """One run; the finished engine jobs."""
    actions = ActionSpace()
    sched = BackfillScheduler(parse_scheduler(spec), predictor)
    manager = WorkloadManager(
        platform, actions, FixedPair(actions, "first-high_gflops"), seed=1, scheduler=sched
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
    """The ``--tune`` grid (see the module docstring)."""
    platform, sim_platform, part = inputs(trace, tune_jobs)
    _, _, whole = inputs(trace)
    held = {spec.id for spec in whole.jobs[len(part.jobs) :]}
    print(f"tuning part: the first {len(part.jobs)} jobs of {len(whole.jobs)}; {BEST_TRIPLE}")
    print(
        f"{'eta':>8s} {'l2':>8s} {'tuning part':>12s} {'whole':>8s} {'held out':>9s} {'cpu s':>6s}"
    )
    results: dict[tuple[float, float], float] = {}
    for eta in TUNE_ETAS:
        for l2 in TUNE_L2S:
            t0 = time.process_time()
            results[(eta, l2)] = avebsld(
                simulate_once(
                    platform, sim_platform, part, BEST_TRIPLE, OnlineRegression(E_LOSS, eta, l2)
                )
            )
            jobs = simulate_once(
                platform, sim_platform, whole, BEST_TRIPLE, OnlineRegression(E_LOSS, eta, l2)
            )
            print(
                f"{eta:8.0f} {l2:8.0e} {results[(eta, l2)]:12.2f} {avebsld(jobs):8.2f} "
                f"{avebsld(jobs, lambda j: j.spec.id in held):9.2f} "
                f"{time.process_time() - t0:6.1f}",
                flush=True,
            )
    chosen = min(results, key=lambda k: (results[k], k))
    print(f"chosen on the tuning part: eta = {chosen[0]:.0f}, l2 = {chosen[1]:.0e}")
    return 0


#: ``--ablation``: label -> OnlineRegression keyword arguments (E-Loss, best triple).
ABLATION: dict[str, dict[str, float | str]] = {
    "eta 50, L2 1e-6, floor (the previous values)": {"eta": 50.0, "l2": 1e-6, "output": "floor"},
    "eta 50, L2 1e-6, abs": {"eta": 50.0, "l2": 1e-6, "output": "abs"},
    "authors' eta and L2, floor": {"output": "floor"},
    "authors' eta and L2, abs (the defaults)": {},
}


def ablation(trace: Path) -> int:
    """The ``--ablation`` runs (see the module docstring)."""
    platform, sim_platform, workload = inputs(trace)
    print(f"best triple {BEST_TRIPLE}, E-Loss; KTH-SP2 {len(workload.jobs)} jobs")
    print(f"{'regression settings':52s} {'AVEbsld':>8s} {'negative':>9s} {'cpu s':>6s}")
    for label, options in ABLATION.items():
        model = _Counting(E_LOSS, **options)
        t0 = time.process_time()
        jobs = simulate_once(platform, sim_platform, workload, BEST_TRIPLE, model)
        share = model.negative / max(model.predicted, 1)
        print(
            f"{label:52s} {avebsld(jobs):8.2f} {share:9.3f} {time.process_time() - t0:6.1f}",
            flush=True,
        )
    return 0


class _Counting(OnlineRegression):
    """Counts the predictions whose model output is negative."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.predicted = 0
        self.negative = 0

    def predict(self, job: object, now: float) -> float:
        value = super().predict(job, now)
        self.predicted += 1
        self.negative += float(self.w @ self._features[job.seq]) < 0
        return value


CORRECTIONS_SHOWN = ("requested", "incremental", "doubling")
VARIANTS_SHOWN = ("easy", "easy-sjbf")


def markdown_table(results: Path) -> str:
    """The README's 20-loss table from a ``--csv`` file of a ``--losses`` run: one row per
    loss, one ``ours (thesis)`` cell per (variant, correction)."""
    ours: dict[str, float] = {}
    with results.open(newline="") as f:
        for i, row in enumerate(csv.DictReader(f)):
            try:
                ours[row["heuristic"]] = float(row["avebsld"])
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(f"{results}: data row {i + 1}: {err!r}") from err
    thesis = thesis_values()
    head = [f"{v} / {c}" for v in VARIANTS_SHOWN for c in CORRECTIONS_SHOWN]
    lines = [
        "| over / under / weight | " + " | ".join(head) + " |",
        "|---" * (len(head) + 1) + "|",
    ]
    for over, under, weight in itertools.product(LOSS_BASES, LOSS_BASES, WEIGHTS):
        cells = []
        for variant in VARIANTS_SHOWN:
            for correction in CORRECTIONS_SHOWN:
                name = f"{over}/{under}/{weight}/{correction}/{variant}"
                spec = losses()[name][0]
                ref = thesis[thesis_key(spec)]
                if name not in ours:
                    raise ValueError(f"{results}: no row for {name!r} (run --losses --csv)")
                cells.append(f"{ours[name]:.1f} ({ref:.1f})")
        lines.append(f"| {over} / {under} / {weight} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def open_new_csv(path: Path) -> tuple[object, Path]:
    """A temporary file next to ``path`` (renamed onto it at the end); refuses an existing
    ``path`` so a user's file is never overwritten."""
    if path.exists():
        raise FileExistsError(f"{path}: already exists; give a new file name")
    tmp = path.with_name(f".{path.name}.tmp")
    return tmp.open("w", newline=""), tmp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--triples", action="store_true")
    parser.add_argument("--losses", action="store_true")
    parser.add_argument("--csv", type=Path, default=None)
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--tune-jobs", type=int, default=10000)
    parser.add_argument("--ablation", action="store_true")
    parser.add_argument("--unfloored-weights", action="store_true")
    parser.add_argument("--table", type=Path, default=None, metavar="RESULTS_CSV")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(markdown_table(args.table))
        return 0
    if not args.trace.is_file():
        if args.trace == Path(TRACE_NAME):  # the default, and found nowhere
            print(missing_message(TRACE_NAME), file=sys.stderr)
        else:
            print(f"trace not found: {args.trace}", file=sys.stderr)
        return 1
    if args.tune:
        return tune(args.trace, args.tune_jobs)
    if args.ablation:
        return ablation(args.trace)
    thesis = thesis_values()
    configs = dict(HEADLINE)
    if args.triples:
        configs.update(triples())
    if args.losses:
        configs.update(losses())
    out, tmp = open_new_csv(args.csv) if args.csv is not None else (None, None)
    writer = csv.writer(out) if out is not None else None
    if writer is not None:
        writer.writerow(["heuristic", "avebsld", "thesis", "max_bsld", "mean_wait", "cpu_s"])
    platform, sim_platform, workload = inputs(args.trace)
    print(f"KTH-SP2: {len(workload.jobs)} jobs on {len(platform.cores)} cores")
    print(
        f"{'heuristic':58s} {'AVEbsld':>8s} {'thesis':>7s} {'diff':>7s} {'max bsld':>9s} "
        f"{'mean wait':>9s} {'max wait':>9s} {'cpu s':>6s}"
    )
    #: thesis key -> (name, thesis, ours) of the learned triples (deduplicated: --triples and
    #: --losses both hold the E-Loss ones).
    pairs: dict[tuple[str, ...], tuple[str, float, float]] = {}
    for name, (spec, ref) in configs.items():
        if ref is None and isinstance(spec, dict):
            ref = thesis.get(thesis_key(spec))
        model = None
        if (
            args.unfloored_weights
            and isinstance(spec, dict)
            and spec.get("predictor") == "regression"
        ):
            model = OnlineRegression(parse_scheduler(spec).triple.loss, weight_floor=None)
        t0 = time.process_time()
        jobs = simulate_once(platform, sim_platform, workload, spec, model)
        cpu = time.process_time() - t0
        m = job_metrics(
            [j.spec.subtime for j in jobs],
            [j.start_time for j in jobs],
            [j.finish_time for j in jobs],
        )
        ours = m.mean_bounded_slowdown
        shown = f"{ref:7.1f}" if ref is not None else f"{'':7s}"
        diff = f"{100 * (ours - ref) / ref:+6.1f}%" if ref is not None else f"{'':7s}"
        print(
            f"{name:58s} {ours:8.1f} {shown} {diff} {m.max_bounded_slowdown:9.0f} "
            f"{m.mean_waiting:9.0f} {m.max_waiting:9.0f} {cpu:6.1f}",
            flush=True,
        )
        if writer is not None:
            writer.writerow(
                [
                    name,
                    repr(ours),
                    "" if ref is None else repr(ref),
                    repr(m.max_bounded_slowdown),
                    repr(m.mean_waiting),
                    f"{cpu:.2f}",
                ]
            )
        if ref is not None and isinstance(spec, dict) and spec.get("predictor") == "regression":
            pairs.setdefault(thesis_key(spec), (name, ref, ours))
    if out is not None:
        out.close()
        os.replace(tmp, args.csv)
    if len(pairs) > 2:
        report_ranking(list(pairs.values()))
    return 0


def report_ranking(pairs: list[tuple[str, float, float]]) -> None:
    """Spearman's rank correlation of the learned triples, thesis vs ours, overall and per
    backfilling variant, and where each side's best triple ranks on the other."""
    print(f"\nranking of the {len(pairs)} learned triples, thesis vs ours:")
    groups = {"all": pairs}
    for variant in ("easy", "easy-sjbf"):
        groups[variant] = [p for p in pairs if p[0].endswith(f"/{variant}")]
    for label, group in groups.items():
        if len(group) > 2:
            rho = spearman([p[1] for p in group], [p[2] for p in group])
            print(f"  Spearman rho ({label}, {len(group)} triples): {rho:+.3f}")
    by_thesis = sorted(pairs, key=lambda p: p[1])
    by_ours = sorted(pairs, key=lambda p: p[2])
    best_t, best_o = by_thesis[0], by_ours[0]
    print(
        f"  thesis's best {best_t[0]} ({best_t[1]:.1f}): ours {best_t[2]:.1f}, "
        f"rank {by_ours.index(best_t) + 1} of {len(pairs)}"
    )
    print(
        f"  our best {best_o[0]} ({best_o[2]:.1f}): thesis {best_o[1]:.1f}, "
        f"rank {by_thesis.index(best_o) + 1} of {len(pairs)}"
    )


if __name__ == "__main__":
    sys.exit(main())
