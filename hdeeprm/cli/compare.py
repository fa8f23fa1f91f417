"""``hdeeprm-compare TRACE PLATFORM``: a learned EASY scheduler against every EASY variant.

Trains on windows of the trace's first part (the training range), picks the EASY variant a site
would pick on the same windows, and plays both, with the literature's reference heuristics, on
held-out windows of the last part (the test range): one table of mean and worst figures per
scheduler and one line per training seed. ``--test-trace``/``--test-platform`` judge on another
trace (transfer). The protocol is :mod:`hdeeprm.comparison.protocol`'s; docs/comparison.md
explains every option.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from hdeeprm.cli._report import Command, guarded
from hdeeprm.errors import InputError


def _range(value: str | None, nb_jobs: int, default: tuple[float, float], name: str):
    from hdeeprm.comparison.setting import JobRange

    if value is None:
        return JobRange(int(default[0] * nb_jobs), int(default[1] * nb_jobs))
    try:
        first, stop = (int(x) for x in value.split(":"))
    except ValueError:
        raise InputError(
            f"got {value!r}; expected FIRST:STOP job indices, e.g. 0:16000", where=name
        ) from None
    return JobRange(first, stop)


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("platform", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--window-jobs",
    type=click.IntRange(min=2),
    default=2000,
    show_default=True,
    help="Jobs per window; each window starts on an idle platform.",
)
@click.option(
    "--train",
    "train",
    metavar="FIRST:STOP",
    help="Job indices of the training range  [default: the first 56%]",
)
@click.option(
    "--test",
    "test",
    metavar="FIRST:STOP",
    help="Job indices of the held-out range  [default: the last 44%]",
)
@click.option(
    "--pool-windows",
    type=click.IntRange(min=1),
    default=12,
    show_default=True,
    help="Windows drawn once from the training range.",
)
@click.option(
    "--train-windows",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Each seed's training windows, drawn from the pool.",
)
@click.option(
    "--test-windows",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Held-out windows, drawn from the test range.",
)
@click.option(
    "--seeds",
    default="0,1,2,3,4",
    show_default=True,
    help="Training seeds, comma-separated; every one is reported.",
)
@click.option(
    "--data-seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the window draws (pool: data seed + 1000; held-out: data seed).",
)
@click.option(
    "--predictions",
    type=click.Choice(["all", "estimates"]),
    default="all",
    show_default=True,
    help="Run-time predictions of the EASY variants: user estimates, AVE2 and the "
    "E-Loss regression with each correction (all), or user estimates alone.",
)
@click.option(
    "--top-k",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="Orderings the learned scheduler chooses among online.",
)
@click.option(
    "--period",
    type=click.FloatRange(min=0, min_open=True),
    default=24.0,
    show_default=True,
    help="Hours between two choices of the learned scheduler.",
)
@click.option(
    "--learner",
    type=click.Choice(["online-easy", "backfill-choice"]),
    default="online-easy",
    show_default=True,
    help="The learned scheduler: EASY learning its ordering online, or EASY whose backfilled "
    "jobs a PPO agent chooses (BackfillChoice-v0).",
)
@click.option(
    "--timesteps",
    type=click.IntRange(min=1),
    default=196_608,
    show_default=True,
    help="PPO steps per seed of --learner backfill-choice.",
)
@click.option(
    "--warm-windows",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="backfill-choice: training windows on which the chosen variant's backfill rule is "
    "cloned into the agent before PPO (0: PPO from scratch).",
)
@click.option(
    "--critic-warmup",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="backfill-choice: first PPO updates that fit the critic alone.",
)
@click.option(
    "--snapshots",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="backfill-choice: networks kept at evenly spaced PPO updates; the one (or the clone) "
    "with the lowest mean on the seed's training windows plays the held-out ones.",
)
@click.option(
    "--members",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="backfill-choice: agents trained per seed (seeds SEED, SEED + 1000, ...) that act "
    "together on the mean of their action probabilities; the budget grows with them.",
)
@click.option(
    "--runs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="backfill-choice: PPO runs per agent (seeds SEED, SEED + 1000, ...), the snapshots "
    "of all of them chosen among on the training windows (needs --snapshots 2 or more); the "
    "budget grows with them.",
)
@click.option(
    "--gamma",
    type=click.FloatRange(min=0.0, max=1.0, min_open=True),
    default=0.99,
    show_default=True,
    help="backfill-choice: PPO's discount per decision (1: the return is minus the window's "
    "mean bounded slowdown).",
)
@click.option(
    "--test-trace",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Judge on this trace's test range instead (transfer).",
)
@click.option(
    "--test-platform",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The platform of --test-trace  [default: PLATFORM]",
)
@click.option(
    "--reuse-grid",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A results.json of an earlier run with the same trace, platform and training "
    "windows: its EASY variants' training figures are reused instead of replayed.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="A new folder for results.json and the printed table (never overwritten).",
)
def main(
    trace: Path,
    platform: Path,
    window_jobs: int,
    train: str | None,
    test: str | None,
    pool_windows: int,
    train_windows: int,
    test_windows: int,
    seeds: str,
    data_seed: int,
    predictions: str,
    top_k: int,
    period: float,
    learner: str,
    timesteps: int,
    warm_windows: int,
    critic_warmup: int,
    snapshots: int,
    members: int,
    runs: int,
    gamma: float,
    test_trace: Path | None,
    test_platform: Path | None,
    reuse_grid: Path | None,
    out: Path | None,
) -> None:
    """Train a learned EASY scheduler on TRACE (SWF) run on PLATFORM (platform JSON), choose
    the best EASY variant on the same training windows, and print both on held-out windows
    beside the reference heuristics (bounded slowdown with tau = 10 s)."""
    from hdeeprm._atomic import write_json, write_text
    from hdeeprm.comparison.protocol import Protocol, compare
    from hdeeprm.comparison.report import render, to_json
    from hdeeprm.comparison.setting import load_setting
    from hdeeprm.comparison.variants import PREDICTIONS

    try:
        seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        raise InputError(
            f"got {seeds!r}; expected integers separated by commas", where="--seeds"
        ) from None
    if not seed_list:
        raise InputError("give at least one seed", where="--seeds")
    if out is not None:
        if out.exists():
            raise InputError("exists: choose a new folder (results are never overwritten)", out)
        parent = out.resolve().parent
        while not parent.exists():
            parent = parent.parent
        if not os.access(parent, os.W_OK):
            raise InputError(f"cannot create a folder under {parent} (not writable)", out)
    if test_platform is not None and test_trace is None:
        raise InputError("--test-platform needs --test-trace", where="--test-platform")
    if runs > 1 and snapshots < 2:
        raise InputError(
            "above 1 needs --snapshots 2 or more: the choice among the runs", where="--runs"
        )
    cpu = time.process_time()
    setting = load_setting(trace, platform)
    test_setting = (
        load_setting(test_trace, test_platform or platform) if test_trace is not None else setting
    )
    protocol = Protocol(
        train=_range(train, setting.nb_jobs, (0.0, 0.56), "--train"),
        test=_range(test, test_setting.nb_jobs, (0.56, 1.0), "--test"),
        window_jobs=window_jobs,
        pool_windows=pool_windows,
        train_windows=min(train_windows, pool_windows),
        test_windows=test_windows,
        data_seed=data_seed,
        predictions=PREDICTIONS if predictions == "all" else PREDICTIONS[:1],
        top_k=top_k,
        period=period * 3600.0,
    )
    protocol.train.check("--train", setting.nb_jobs, window_jobs)
    protocol.test.check("--test", test_setting.nb_jobs, window_jobs)
    click.echo(
        f"{trace.name} on {platform.name}: {setting.nb_jobs} jobs, {setting.nb_cores} cores; "
        f"windows of {window_jobs} jobs; training range [{protocol.train.first}, "
        f"{protocol.train.stop}), {pool_windows} pool windows, {protocol.train_windows} per seed; "
        f"seeds {', '.join(map(str, seed_list))}"
    )
    grid = None
    if reuse_grid is not None:
        from hdeeprm._jsonfile import read_json
        from hdeeprm.comparison.report import grid_from_json
        from hdeeprm.comparison.setting import draw_windows

        pool = draw_windows(protocol.train, window_jobs, pool_windows, data_seed + 1000)
        grid = grid_from_json(
            read_json(reuse_grid, "results.json"), str(trace), str(platform), pool, str(reuse_grid)
        )
    trainer = None
    if learner == "backfill-choice":
        from hdeeprm.comparison.backfill_agent import BackfillAgentLearner

        trainer = BackfillAgentLearner(
            timesteps=timesteps,
            warm_windows=warm_windows,
            critic_warmup=critic_warmup,
            snapshots=snapshots,
            members=members,
            runs=runs,
            gamma=gamma,
        )
    result = compare(
        setting,
        protocol,
        seed_list,
        test_setting=test_setting,
        grid=grid,
        learner=trainer,
        log=lambda s: click.echo(s),
    )
    text = render(result)
    click.echo(text)
    click.echo(f"total {time.process_time() - cpu:.0f} s CPU")
    if out is not None:
        out.mkdir(parents=True)
        write_json(out / "results.json", to_json(result), indent=1)
        write_text(out / "table.txt", text + "\n")
        click.echo(f"saved {out / 'results.json'} and {out / 'table.txt'}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
