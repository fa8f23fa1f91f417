"""The speed suite's benchmarks: each a function returning its figures, run by ``run.py`` in a
process of its own.

Each takes the trace it needs (``None`` for the synthetic one) and ``quick`` (a smaller
input), and returns rows of (figure, value, unit, CPU seconds of the measured part). Only the
measured part is timed: the conversion of the trace a replay needs is set-up, not the replay's
cost. CPU time (``time.process_time``) is reported rather than wall time because this suite
runs on shared machines, where other processes inflate wall time but hardly CPU time.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import common

Row = tuple[str, float, str, float]
GAIA_PLATFORM = common.PLATFORM_EXAMPLES / "gaia.json"
PAIR = "shortest-high_gflops"


@dataclass(frozen=True)
class Benchmark:
    """One entry of the suite.

    Attributes:
        name: what ``--only`` selects.
        question: what it answers (the README's table).
        trace: short name of the trace it needs, ``None`` for none.
        quick: part of ``--quick``.
        run: ``run(trace path or None, quick) -> rows``.
    """

    name: str
    question: str
    trace: str | None
    quick: bool
    run: Callable[[Path | None, bool], list[Row]]


def _quiet() -> None:
    # Bandwidth over-subscription warnings would reach stderr through logging's last resort.
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)


def _gaia_inputs(trace: Path, nb_jobs: int | None, folder: Path):  # noqa: ANN202
    """The Gaia platform, its engine platform and the first ``nb_jobs`` jobs (all: None)."""
    from hdeeprm.platform import load_platform, write_platform_xml
    from hdeeprm.simulation import load_platform_xml
    from hdeeprm.workload import convert_swf

    platform = load_platform(GAIA_PLATFORM)
    write_platform_xml(platform, folder / "platform.xml")
    workload = convert_swf(
        trace,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
        nb_jobs=nb_jobs,
    ).workload
    return platform, load_platform_xml(folder / "platform.xml"), workload


def convert(trace: Path | None, quick: bool) -> list[Row]:
    """The workload pipeline: SWF to a Batsim workload, on the Gaia platform's cores."""
    from hdeeprm.platform import load_platform
    from hdeeprm.workload import convert_swf

    assert trace is not None
    platform = load_platform(GAIA_PLATFORM)
    with common.timed() as timing:
        result = convert_swf(
            trace,
            reference_speed=platform.reference_speed,
            max_cores=len(platform.cores),
            seed=0,
            nb_jobs=10_000 if quick else None,
        )
    jobs = len(result.workload.jobs)
    label = "first 10,000 jobs" if quick else "whole trace"
    return [(f"convert Gaia, {label}", jobs / timing.cpu, "jobs/s", timing.cpu)]


def engine(trace: Path | None, quick: bool) -> list[Row]:
    """The engine alone, with the trivial first-fit FCFS decision system, every host in P0."""
    from speed.engine_replay import AllP0FCFS

    from hdeeprm.simulation import Engine, run

    assert trace is not None
    _quiet()
    with tempfile.TemporaryDirectory() as tmp:
        _, sim_platform, workload = _gaia_inputs(trace, 10_000 if quick else None, Path(tmp))
    engine = Engine(sim_platform, workload, trace=False)
    with common.timed() as timing:
        run(engine, AllP0FCFS())
    label = "first 10,000 jobs" if quick else "whole trace"
    jobs = len(workload.jobs)
    return [(f"first-fit engine replay, Gaia {label}", jobs / timing.cpu, "jobs/s", timing.cpu)]


def classic(trace: Path | None, quick: bool) -> list[Row]:
    """Whole Gaia decided by the workload manager with a classic pair, against first-fit."""
    from speed.scaling import gaia_ratio

    assert trace is not None
    figures = gaia_ratio(PAIR, trace.parent)
    jobs, manager, first_fit = figures["jobs"], figures["manager"], figures["first_fit"]
    return [
        (f"{PAIR}, whole Gaia", jobs / manager, "jobs/s", manager),
        ("  its CPU time / first-fit's", manager / first_fit, "x", manager + first_fit),
    ]


def environment(trace: Path | None, quick: bool) -> list[Row]:
    """Gymnasium environment steps on a Gaia window: what training pays per decision."""
    import numpy as np

    from hdeeprm.environment import HeterogeneousClusterEnv
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import options_from_json

    assert trace is not None
    _quiet()
    window = 1_000 if quick else 4_000
    raw = {
        "seed": 1,
        "workload_file_path": str(trace),
        "platform_file_path": str(GAIA_PLATFORM),
        "pybatsim": {
            "log_level": "ERROR",
            "env": {"objective": "avg_job_slowdown", "observation": "minimal"},
            "agent": {"type": "LEARNING"},
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        inputs = prepare_inputs(options_from_json(raw, Path(tmp) / "options.json"), tmp)
        raw["pybatsim"]["env"]["episodes"] = {
            "window_jobs": window,
            "train_jobs": [0, len(inputs.workload.jobs)],
        }
        options = options_from_json(raw, Path(tmp) / "options.json")
        env = HeterogeneousClusterEnv(inputs=dataclasses.replace(inputs, options=options))
        rng = np.random.default_rng(1)
        n = env.action_space.n
        steps, done = 0, False
        with common.timed() as timing:
            env.reset(seed=1)
            while not done:
                _, _, done, _, _ = env.step(int(rng.integers(n)))
                steps += 1
        env.close()
    figure = f"environment steps, a {window:,}-job Gaia window"
    return [(figure, steps / timing.cpu, "steps/CPU s", timing.cpu)]


def pool(trace: Path | None, quick: bool) -> list[Row]:
    """The core pool and resource manager alone, replaying the calls of a real run."""
    from speed.pool_replay import record, replay

    assert trace is not None
    _quiet()
    size = "5000" if quick else "20000"
    platform, calls, start = record("gaia", size, PAIR, None, trace.parent)
    cpu = replay(platform, calls, start, check=False)
    figure = f"core pool replay, Gaia first {int(size):,} jobs"
    return [(figure, len(calls) / cpu, "calls/s", cpu)]


def ppo(trace: Path | None, quick: bool) -> list[Row]:
    """PPO training end to end (environments, policy, updates) on Gaia windows."""
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import options_from_json
    from hdeeprm.training.ppo import PPOConfig, PPOTrainer, inputs_factories

    assert trace is not None
    _quiet()
    steps, num_envs = (512, 2) if quick else (4096, 4)
    raw = {
        "seed": 1,
        "workload_file_path": str(trace),
        "platform_file_path": str(GAIA_PLATFORM),
        "pybatsim": {
            "log_level": "ERROR",
            "env": {
                "objective": "avg_job_slowdown",
                "observation": "minimal",
                "episodes": {"window_jobs": 2000, "train_jobs": [0, 15000]},
            },
            "agent": {"type": "LEARNING", "algorithm": "ppo"},
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "options.json"
        path.write_text(json.dumps(raw))
        inputs = prepare_inputs(options_from_json(raw, path), tmp)
        config = PPOConfig(num_envs=num_envs, num_steps=256, vector="sync", seed=1, split="train")
        trainer = PPOTrainer(config, inputs_factories(inputs, num_envs, "train"))
        trainer.reset_envs()
        with common.timed() as timing:
            trainer.learn(steps)
        done = trainer.global_step
        trainer.close()
    figure = f"PPO training, {done:,} decisions, {num_envs} envs (sync)"
    return [(figure, done / timing.cpu, "decisions/CPU s", timing.cpu)]


def synthetic(trace: Path | None, quick: bool) -> list[Row]:
    """The first-fit engine replay on a synthetic Lublin workload: needs no trace."""
    from speed.engine_replay import AllP0FCFS

    from hdeeprm.platform import load_platform, write_platform_xml
    from hdeeprm.simulation import Engine, load_platform_xml, run
    from hdeeprm.workload import lublin_workload

    _quiet()
    nb_jobs = 2_000 if quick else 20_000
    platform = load_platform(GAIA_PLATFORM)
    with tempfile.TemporaryDirectory() as tmp:
        write_platform_xml(platform, Path(tmp) / "platform.xml")
        sim_platform = load_platform_xml(Path(tmp) / "platform.xml")
    workload = lublin_workload(
        nb_jobs, len(platform.cores), 1, reference_speed=platform.reference_speed
    ).workload
    engine = Engine(sim_platform, workload, trace=False)
    with common.timed() as timing:
        run(engine, AllP0FCFS())
    figure = f"first-fit engine replay, {nb_jobs:,} Lublin jobs"
    return [(figure, nb_jobs / timing.cpu, "jobs/s", timing.cpu)]


def job_selection(trace: Path | None, quick: bool) -> list[Row]:
    """``hdeeprm/JobSelection-v0`` on lublin_256 (256-job windows, Q = 128, random valid
    picks), with and without EASY backfilling: jobs per CPU second, resets included."""
    from speed.job_selection_speed import make_env, play

    assert trace is not None
    episodes = 8 if quick else 40
    rows: list[Row] = []
    for backfill in (True, False):
        env = make_env(trace, backfill)
        jobs, _, cpu, _ = play(env, episodes, seed=1)
        mode = "with" if backfill else "without"
        figure = f"job selection lublin_256, {mode} backfilling"
        rows.append((figure, jobs / cpu, "jobs/CPU s", cpu))
    return rows


SUITE = (
    Benchmark("convert", "How fast is an SWF trace converted?", "gaia", True, convert),
    Benchmark("engine", "How fast is the engine alone?", "gaia", True, engine),
    Benchmark("synthetic", "The engine, without any trace", None, True, synthetic),
    Benchmark(
        "classic", "What does the decision system cost over first-fit?", "gaia", False, classic
    ),
    Benchmark("environment", "How many RL decisions per CPU second?", "gaia", False, environment),
    Benchmark("pool", "How fast is the core pool alone?", "gaia", False, pool),
    Benchmark("ppo", "How fast does PPO train end to end?", "gaia", False, ppo),
    Benchmark(
        "job_selection",
        "How many jobs per CPU second does JobSelection-v0 play?",
        "lublin256",
        False,
        job_selection,
    ),
)
BY_NAME = {b.name: b for b in SUITE}
