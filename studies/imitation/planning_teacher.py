"""How much of the rollout teacher's gain is left without clairvoyance?

Usage: ``python -m studies.imitation.planning_teacher RUN_DIR [--pair NAME] [--segment N]
[--tolerance T] [--windows N] [--forecast SECONDS] [--clairvoyant]``

``RUN_DIR`` is an output folder of ``imitation_benchmark.py`` (its ``student_options.json``:
trace, platform, objective, the teacher's candidates as action space, the windows). On the
run's pair-choice windows of the training part (8 in medium mode; the first ``--windows``),
the pair, the planning teacher (:class:`~studies.imitation.planning.PlanningTeacher`: the
rollout algorithm on what a scheduler knows at each segment, requested times and no
arrivals, or with ``--forecast H`` the last ``H`` seconds' submissions again as the arrivals)
and, with ``--clairvoyant``, the rollout teacher on the real future
(:class:`~studies.imitation.rollout.RolloutTeacher`) play each window; prints each one's
objective per window, the mean, and the windows better / worse than the pair.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training import evaluate as ev
from studies.imitation.planning import PlanningTeacher
from studies.imitation.rollout import RolloutTeacher
from studies.ppo_policy_pairs import learning_benchmark as lb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--pair", help="the base pair (default: the run's first action)")
    parser.add_argument("--segment", type=int, default=200)
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--windows", type=int, help="the first N pair-choice windows only")
    parser.add_argument(
        "--forecast",
        type=float,
        default=0.0,
        help="the planner's arrival forecast: the last SECONDS' submissions again (0: none)",
    )
    parser.add_argument("--clairvoyant", action="store_true", help="also the rollout teacher")
    args = parser.parse_args(argv)
    if not args.forecast >= 0.0:
        parser.error(f"--forecast must be >= 0 seconds, got {args.forecast}")
    path = args.run_dir / "student_options.json"
    if not path.is_file():
        print(f"not found: {path} (an output folder of imitation_benchmark.py)", file=sys.stderr)
        return 1
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    raw = json.loads(path.read_text())
    inputs = prepare_inputs(options_from_json(raw, path), args.run_dir)
    episodes = raw["pybatsim"]["env"]["episodes"]
    mode = {"train_jobs": episodes["train_jobs"], "train_windows": episodes["val_windows"]}
    env = HeterogeneousClusterEnv(inputs=lb.pair_choice_inputs(inputs, mode), split="val")
    names = env.action_names
    pair = args.pair or names[0]
    if pair not in names:
        print(f"--pair {pair!r} is not among {', '.join(names)}", file=sys.stderr)
        return 2
    base = names.index(pair)
    maximize = inputs.options.env.objective not in ev.MINIMIZED
    sign = -1.0 if maximize else 1.0
    windows = list(range(env.nb_eval_windows))[: args.windows]
    teachers = {"planner": PlanningTeacher}
    if args.clairvoyant:
        teachers["clairvoyant"] = RolloutTeacher
    print(
        f"{pair} improved over {', '.join(names)} on windows {env.windows.val_starts}, "
        f"segments of {args.segment} decisions, tolerance {args.tolerance:g}, "
        f"arrival forecast {args.forecast:g} s"
    )
    values: dict[str, list[float]] = {"pair": [], **{k: [] for k in teachers}}
    for w in windows:
        row = []
        for name, cls in teachers.items():
            extra_args = {"forecast": args.forecast} if name == "planner" else {}
            teacher = cls(
                env,
                base,
                range(len(names)),
                segment=args.segment,
                maximize=maximize,
                tolerance=args.tolerance,
                **extra_args,
            )
            t0 = time.process_time()
            result = teacher.improve(w)
            if not values["pair"] or len(values["pair"]) <= windows.index(w):
                values["pair"].append(result.base_value)
            values[name].append(result.value)
            extra = f", {result.unsynced} unsynced" if name == "planner" else ""
            row.append(
                f"{name} {result.value:.6g} ({result.improvement:+.1%}; away on "
                f"{sum(a != base for a in result.segment_actions)} of "
                f"{len(result.segment_actions)} segments{extra}; "
                f"{time.process_time() - t0:.0f} s CPU)"
            )
        print(f"  window {w}: pair {values['pair'][-1]:.6g}; " + "; ".join(row), flush=True)
    ref = np.array(values["pair"])
    for name in teachers:
        v = np.array(values[name])
        better = int(np.sum(sign * v < sign * ref))
        worse = int(np.sum(sign * v > sign * ref))
        print(
            f"{name}: mean {v.mean():.6g} against the pair's {ref.mean():.6g} "
            f"({(v.mean() - ref.mean()) / abs(ref.mean()):+.1%}), better on {better}, worse "
            f"on {worse} of {len(v)} windows"
        )
    return 0


if __name__ == "__main__":
    lb.run_main(main)
