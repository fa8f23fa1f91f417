"""Digests that pin the environment's and the engine's results bit for bit (speed work).

Usage: ``python benchmarks/speed/env_digest.py [--windows W] [--window-jobs N] [--classic-jobs M]
[--pairs PAIR ...]``

Prints three kinds of SHA-256 digests; a change that claims identical results must leave
every line the same:

1. ``env``: the benchmark configuration of ``env_steps.py`` (the same W windows of N Gaia
   jobs and the same random actions, seed 1, ``minimal`` observation, objective rewards):
   every observation's bytes, reward, ``terminated`` flag and ``info`` entry (the action mask
   included), then the episode's per-job energies, per-host energies and total energy.
2. ``env-traced``: the first window again with ``trace=True`` and the ``normal`` observation
   (every core's P-state and remaining time), then every output file it writes.
3. ``classic``: ``out_jobs.csv`` and the other output files of an in-process classic run (a
   policy pair, no learning) over the first M Gaia jobs, per pair.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hdeeprm._digest import feed, feed_random_episode
from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.simulation import Engine, load_platform_xml, run, write_outputs
from hdeeprm.workload.convert import convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)
PLATFORM = REPO / "platform_examples" / "gaia.json"


def _make_env(tmp: str, observation: str, window_jobs: int, seed: int) -> HeterogeneousClusterEnv:
    raw: dict[str, Any] = {
        "seed": seed,
        "workload_file_path": str(TRACE),
        "platform_file_path": str(PLATFORM),
        "pybatsim": {
            "env": {"objective": "avg_job_slowdown", "observation": observation},
            "agent": {"type": "LEARNING"},
        },
    }
    options = options_from_json(raw, Path(tmp) / "options.json")
    inputs = prepare_inputs(options, tmp)
    raw["pybatsim"]["env"]["episodes"] = {
        "window_jobs": window_jobs,
        "train_jobs": [0, len(inputs.workload.jobs)],
    }
    options = options_from_json(raw, Path(tmp) / "options.json")
    return HeterogeneousClusterEnv(inputs=dataclasses.replace(inputs, options=options))


def _episode(env: HeterogeneousClusterEnv, rng: np.random.Generator, digest: Any, **reset) -> int:
    return feed_random_episode(digest, env, rng, **reset)


def env_digests(windows: int, window_jobs: int, seed: int = 1) -> None:
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        env = _make_env(tmp, "minimal", window_jobs, seed)
        rng = np.random.default_rng(seed)  # as env_steps.py: the same windows and actions
        for episode in range(windows):
            digest = hashlib.sha256()
            steps = _episode(env, rng, digest, seed=seed if episode == 0 else None)
            print(f"env window {episode} ({env.window[0]}-{env.window[1]}, {steps} steps):")
            print(f"  {digest.hexdigest()}")
    with tempfile.TemporaryDirectory() as tmp:
        env = _make_env(tmp, "normal", window_jobs, seed)
        digest = hashlib.sha256()
        steps = _episode(
            env, np.random.default_rng(seed), digest, seed=seed, options={"trace": True}
        )
        out = Path(tmp) / "out"
        for name, path in sorted(env.write_outputs(out).items()):
            feed(digest, name)
            digest.update(Path(path).read_bytes())
        print(f"env-traced window ({env.window[0]}-{env.window[1]}, {steps} steps, outputs):")
        print(f"  {digest.hexdigest()}")


def classic_digests(pairs: list[str], nb_jobs: int, seed: int = 1) -> None:
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    platform = load_platform(PLATFORM)
    workload = convert_swf(
        TRACE,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=seed,
        nb_jobs=nb_jobs,
    ).workload
    for pair in pairs:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            write_platform_xml(platform, out / "platform.xml")
            actions = ActionSpace()
            manager = WorkloadManager(platform, actions, FixedPair(actions, pair), seed=seed)
            engine = Engine(load_platform_xml(out / "platform.xml"), workload, trace=True)
            run(engine, manager)
            files = write_outputs(engine, out)
            jobs = hashlib.sha256(Path(files["jobs"]).read_bytes()).hexdigest()
            every = hashlib.sha256()
            for name, path in sorted(files.items()):
                feed(every, name)
                every.update(Path(path).read_bytes())
            print(f"classic {pair} ({len(workload.jobs)} jobs): out_jobs.csv {jobs}")
            print(f"  every output {every.hexdigest()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=4, help="env_steps.py windows")
    parser.add_argument("--window-jobs", type=int, default=4000, help="jobs per window")
    parser.add_argument("--classic-jobs", type=int, default=None, help="first M jobs (all)")
    parser.add_argument("--pairs", nargs="*", default=["shortest-high_gflops", "random-low_power"])
    args = parser.parse_args(argv)
    if not TRACE.is_file():
        print(common.missing_message(common.GAIA), file=sys.stderr)
        return 1
    env_digests(args.windows, args.window_jobs)
    if args.pairs:
        classic_digests(args.pairs, args.classic_jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
