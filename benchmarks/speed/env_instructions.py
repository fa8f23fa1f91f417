"""Instructions of the environment's stepping alone, for callgrind (a count the load cannot move).

Usage::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=starmap_next --callgrind-out-file=/tmp/env.cg \\
        python3.11 benchmarks/speed/env_instructions.py [--windows W] [--trace PATH]
    grep '^summary' /tmp/env.cg

``env_steps.py``'s configuration (4,000-job Gaia windows drawn from seed 1, the full
platform, ``minimal`` observation, objective rewards, uniformly random actions from the same
generator, action mask in ``info``): the inputs are prepared and the environment built first,
then one pass over W windows (resets included) runs inside ``itertools.starmap``, so that
callgrind, told to collect only inside CPython's ``starmap_next``, counts the stepping and
nothing of the set-up. On a shared machine CPU time varies by 10-15% between two runs of the
same code; this count does not (``PYTHONHASHSEED=0`` fixes the order of string sets). Use the
python binary itself, not a pyenv shim (valgrind would follow the shim's shell). Without
valgrind it simply runs the pass and prints the number of steps.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import logging
import sys
import tempfile
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=4, help="windows (episodes) to run")
    parser.add_argument("--window-jobs", type=int, default=4000, help="jobs per window")
    parser.add_argument("--trace", type=Path, default=TRACE, help="the Gaia SWF trace")
    args = parser.parse_args()
    args.trace = common.require_trace(args.trace)
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    raw = {
        "seed": 1,
        "workload_file_path": str(args.trace),
        "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
        "pybatsim": {
            "env": {"objective": "avg_job_slowdown", "observation": "minimal"},
            "agent": {"type": "LEARNING"},
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        inputs = prepare_inputs(options_from_json(raw, Path(tmp) / "options.json"), tmp)
        raw["pybatsim"]["env"]["episodes"] = {
            "window_jobs": args.window_jobs,
            "train_jobs": [0, len(inputs.workload.jobs)],
        }
        options = options_from_json(raw, Path(tmp) / "options.json")
        env = HeterogeneousClusterEnv(inputs=dataclasses.replace(inputs, options=options))
        n = env.action_space.n

        def one_pass() -> int:
            rng = np.random.default_rng(1)  # env_steps.py's windows and actions
            steps = 0
            for episode in range(args.windows):
                env.reset(seed=1 if episode == 0 else None)
                done = False
                while not done:
                    _, _, done, _, _ = env.step(int(rng.integers(n)))
                    steps += 1
            return steps

        # The only starmap of the run: callgrind collects inside it.
        (steps,) = itertools.starmap(one_pass, [()])
    print(f"{steps} steps over {args.windows} windows")


if __name__ == "__main__":
    main()
