"""Learned backfilling (RLBackfilling's setting): an agent chooses which job EASY backfills.

``hdeeprm/BackfillChoice-v0`` keeps EASY: the oldest job starts when it fits, else it is reserved,
and the agent only chooses, among the jobs EASY may backfill now, which one starts (or none).
The agent is the project's kernel job selector (``TwoStepPPO``, one small network scoring every
candidate) trained on windows of a trace's first part (default: lublin_256's first 70%, exact
run times: the trace has no requests). It is judged, with every seed, beside EASY and EASY-SJBF
played in the same environment on

* held-out windows of the same trace's last part (default: its last 30%, seed 0), and
* windows of each ``--transfer`` trace's last 30% (default: KTH-SP2, user estimates, 100
  nodes): a trace it never saw (RLBackfilling trained on Lublin-256 and tested on SDSC-SP2).

Figures per window: mean bounded slowdown (tau 10 s), worst wait, worst bounded slowdown.

``--warm-start EASY-SJBF`` (or ``EASY``) first clones that rule's choices on ``--warm-windows``
training windows into each seed's network (behaviour cloning,
:func:`hdeeprm.training.cloning.clone_rule`), then PPO continues from it; with
``--untrained`` the cloned network plays without PPO (how close the clone is to the rule).
Usage::

    python -m studies.learned_backfilling.backfill_choice --seeds 0 1 2 3 4 --out results.json
    python -m studies.learned_backfilling.backfill_choice --trace KTH-SP2-1996-2.1-cln.swf.gz \
        --platform platform_examples/kth_sp2.json --no-transfer
    python -m studies.learned_backfilling.backfill_choice --warm-start EASY-SJBF
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hdeeprm._atomic import write_json
from hdeeprm.environment import BackfillChoiceEnv
from hdeeprm.environment.backfill_choice import easy_pick, sjbf_pick
from hdeeprm.inputs import ExperimentInputs, prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training.cloning import WarmStart, clone_rule
from studies.common import REPO, trace
from studies.imitation.picker_cloning import add_cloning_arguments
from studies.job_selection_lublin.job_selection_benchmark import twostep_config

LUBLIN = ("lublin_256.swf.gz", REPO / "platform_examples" / "lublin_256.json")
KTH = ("KTH-SP2-1996-2.1-cln.swf.gz", REPO / "platform_examples" / "kth_sp2.json")
#: Share of a trace's jobs before its held-out part when no range is given.
SPLIT = 0.7
SLOTS = 128
TAU = 10.0

Picker = Callable[[BackfillChoiceEnv], Any]
#: The rules played beside the agent, and the ones ``--warm-start`` clones.
RULES: dict[str, Picker] = {"EASY": easy_pick, "EASY-SJBF": sjbf_pick}


@dataclasses.dataclass(frozen=True)
class Window:
    """One played window: mean bounded slowdown, worst wait (s), worst bounded slowdown."""

    mean_bsld: float
    max_wait: float
    max_bsld: float


def write_options(
    folder: Path,
    trace_path: Path,
    platform: Path,
    jobs: tuple[tuple[int, int], tuple[int, int]],
    windows: int,
    window: int,
) -> Path:
    train_jobs, eval_jobs = jobs
    raw = {
        "seed": 0,
        "workload_file_path": str(trace_path.resolve()),
        "platform_file_path": str(platform.resolve()),
        "use_walltime": True,
        "pybatsim": {
            "env": {
                "objective": "avg_job_slowdown",
                "episodes": {
                    "window_jobs": window,
                    "train_jobs": list(train_jobs),
                    "eval_jobs": list(eval_jobs),
                    "eval_windows": windows,
                    "eval_seed": 0,
                },
            },
            "agent": {"type": "LEARNING", "run": "train"},
        },
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "options.json"
    path.write_text(json.dumps(raw, indent=1))
    return path


def parse_range(text: str) -> tuple[int, int]:
    """``"A:B"`` as the job range ``(A, B)``."""
    try:
        a, b = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a job range A:B, got {text!r}") from None
    if not 0 <= a < b:
        raise argparse.ArgumentTypeError(f"expected 0 <= A < B in the job range, got {text!r}")
    return a, b


def positive(text: str) -> int:
    """A whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def find(name: str) -> Path:
    """A trace given as a path, or by name in ``HDEEPRM_TRACES`` or the cache."""
    path = Path(name)
    if path.is_file():
        return path
    path = trace(name)
    if not path.is_file():
        sys.exit(f"{name} not found: set HDEEPRM_TRACES or run `hdeeprm-traces fetch {name}`")
    return path


def label(name: str) -> str:
    """A trace's name without its folder and its ``.swf`` / ``.gz`` suffixes."""
    return Path(name).name.removesuffix(".gz").removesuffix(".swf")


def inputs_for(
    folder: Path,
    name: str,
    platform: Path,
    ranges: tuple[tuple[int, int] | None, tuple[int, int] | None],
    windows: int,
    window: int,
) -> ExperimentInputs:
    """Prepared inputs of one trace; a range None: the first 70% (training) or the last 30%
    (held-out) of its jobs."""
    path = find(name)
    if not platform.is_file():
        sys.exit(f"platform {platform} not found")
    train, test = ranges
    if train is None or test is None:  # the job count is known once converted: prepare twice
        probe = folder / "probe" / path.name
        probed = prepare_inputs(
            load_options(write_options(probe, path, platform, ((0, 1), (1, 2)), 1, 1)),
            probe / "run",
        )
        n = len(probed.workload.jobs)
        train = train or (0, int(n * SPLIT))
        test = test or (int(n * SPLIT), n)
    for what, (a, b) in (("training", train), ("held-out", test)):
        if b - a < window:
            sys.exit(f"{name}: the {what} range {a}:{b} is shorter than one {window}-job window")
    options = load_options(
        write_options(folder / path.name, path, platform, (train, test), windows, window)
    )
    return prepare_inputs(options, folder / path.name / "run")


def play(env: BackfillChoiceEnv, pick: Picker) -> list[Window]:
    """Every evaluation window of ``env`` under ``pick``."""
    out = []
    for k in range(env.nb_eval_windows):
        env.reset(options={"window": k})
        done = env.finished
        while not done:
            _, _, done, _, _ = env.step(pick(env))
        jobs = env.engine.finished_jobs
        waits = [j.start_time - j.spec.subtime for j in jobs]
        bslds = [
            max((j.finish_time - j.spec.subtime) / max(j.finish_time - j.start_time, TAU), 1.0)
            for j in jobs
        ]
        out.append(Window(math.fsum(bslds) / len(bslds), max(waits), max(bslds)))
    return out


def train(
    inputs: ExperimentInputs, seed: int, args: argparse.Namespace
) -> tuple[Picker, float, WarmStart | None, float]:
    """The kernel job selector trained on ``inputs``' training windows, after cloning
    ``args.warm_start`` when given: its picker, PPO's CPU s, the warm start and its CPU s."""
    from hdeeprm.training.twostep import TwoStepPPO, job_selection_factories

    config = twostep_config(args, seed, critic_warmup=args.critic_warmup)
    fns = job_selection_factories(
        inputs, args.envs, "train", backfill_choice=True, queue_slots=SLOTS, wait=args.wait
    )
    agent = TwoStepPPO(config, fns)
    cloned, warm_cpu = None, time.process_time()
    if args.warm_start is not None:
        env = BackfillChoiceEnv(inputs, split="train", queue_slots=SLOTS, wait=args.wait)
        try:
            cloned = clone_rule(
                agent,
                env,
                RULES[args.warm_start],
                args.warm_start,
                seed=seed,
                windows=args.warm_windows,
                epochs=args.warm_epochs,
                learning_rate=args.warm_lr,
            )
        finally:
            env.close()
    cpu = time.process_time()
    warm_cpu = cpu - warm_cpu
    if not args.untrained:
        agent.learn(args.timesteps)
    cpu = time.process_time() - cpu
    agent.close()
    return agent.act, cpu, cloned, warm_cpu


def summary(windows: Sequence[Window]) -> dict[str, Any]:
    return {
        "mean_bsld": math.fsum(w.mean_bsld for w in windows) / len(windows),
        "max_wait": max(w.max_wait for w in windows),
        "max_bsld": max(w.max_bsld for w in windows),
        "per_window": [round(w.mean_bsld, 2) for w in windows],
    }


def line(name: str, s: dict[str, Any]) -> str:
    per = " ".join(f"{v:.1f}" for v in s["per_window"])
    return (
        f"  {name:<14} {s['mean_bsld']:>9.2f} {s['max_wait'] / 3600:>9.1f} "
        f"{s['max_bsld']:>9.1f}  {per}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", default=LUBLIN[0], help="training trace: a path or a name")
    parser.add_argument("--platform", type=Path, default=LUBLIN[1], help="its platform JSON")
    parser.add_argument("--train", type=parse_range, help="training jobs A:B (first 70%%)")
    parser.add_argument("--test", type=parse_range, help="held-out jobs A:B (last 30%%)")
    parser.add_argument(
        "--transfer",
        nargs=2,
        action="append",
        metavar=("TRACE", "PLATFORM"),
        help="also test on this trace's last 30%% (repeatable; default: KTH-SP2)",
    )
    parser.add_argument("--no-transfer", action="store_true", help="test on the trace only")
    parser.add_argument("--window", type=positive, default=1024, help="jobs per window")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--timesteps", type=positive, default=98_304, help="PPO steps per seed")
    parser.add_argument(
        "--untrained", action="store_true", help="control: play each seed's initial network"
    )
    parser.add_argument("--eval-windows", type=positive, default=10)
    parser.add_argument("--envs", type=positive, default=2)
    parser.add_argument("--n-steps", type=positive, default=1024)
    parser.add_argument("--batch", type=positive, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--nothing-bias", type=float, default=-3.0)
    parser.add_argument(
        "--wait", action="store_true", help="the agent may also backfill nothing (first protocol)"
    )
    parser.add_argument("--out", type=Path, help="results as JSON (written atomically)")
    warm = parser.add_argument_group("warm start: clone a rule before PPO")
    warm.add_argument("--warm-start", choices=tuple(RULES), default=None)
    warm.add_argument("--warm-windows", type=positive, default=16, help="training windows to clone")
    add_cloning_arguments(warm)
    args = parser.parse_args(argv)
    if args.warm_epochs < 1 or not args.warm_lr > 0.0 or args.critic_warmup < 0:
        parser.error("--warm-epochs must be >= 1, --warm-lr > 0 and --critic-warmup >= 0")
    if args.out is not None and args.out.exists():
        parser.error(f"--out {args.out} exists: choose a new file (results are never overwritten)")
    if args.out is not None and not args.out.parent.is_dir():
        parser.error(f"--out: folder {args.out.parent} does not exist")
    protocol = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    results: dict[str, Any] = {"protocol": protocol, "tests": {}, "warm_start": {}}
    with tempfile.TemporaryDirectory(prefix="hdeeprm-bfchoice-") as tmp:
        folder = Path(tmp)
        window, windows = args.window, args.eval_windows
        home = inputs_for(
            folder, args.trace, args.platform, (args.train, args.test), windows, window
        )
        transfers = [] if args.no_transfer else args.transfer or [[KTH[0], str(KTH[1])]]
        tests = {
            f"{label(args.trace)} held-out": BackfillChoiceEnv(
                home, split="eval", queue_slots=SLOTS, wait=args.wait
            )
        }
        for name, platform in transfers:
            other = inputs_for(folder, name, Path(platform), (None, None), windows, window)
            tests[f"{label(name)} (transfer)"] = BackfillChoiceEnv(
                other, split="eval", queue_slots=SLOTS, wait=args.wait
            )
        for test, env in tests.items():
            results["tests"][test] = {
                "windows": list(env.windows.eval_starts),
                "rules": {name: summary(play(env, pick)) for name, pick in RULES.items()},
                "seeds": {},
            }
        for seed in args.seeds:
            pick, cpu, cloned, warm_cpu = train(home, seed, args)
            if cloned is not None:
                print(f"seed {seed}: {cloned.line()} ({warm_cpu:.0f} CPU s)", flush=True)
                results["warm_start"][str(seed)] = {
                    **dataclasses.asdict(cloned),
                    "line": cloned.line(),
                    "cpu_s": round(warm_cpu, 1),
                }
            steps = 0 if args.untrained else args.timesteps
            print(f"seed {seed}: trained {steps} steps in {cpu:.0f} CPU s", flush=True)
            for test, env in tests.items():
                s = summary(play(env, pick))
                s["train_cpu_s"] = round(cpu, 1)
                results["tests"][test]["seeds"][str(seed)] = s
    print(f"\n{'':2}{'scheduler':<14} {'mean bsld':>9} {'max wait':>9} {'max bsld':>9}  per window")
    for test, r in results["tests"].items():
        print(f"{test} (windows start at jobs {r['windows']}), max wait in hours:")
        for name, s in r["rules"].items():
            print(line(name, s))
        easy, sjbf = r["rules"]["EASY"]["mean_bsld"], r["rules"]["EASY-SJBF"]["mean_bsld"]
        best = min(easy, sjbf)
        for seed, s in r["seeds"].items():
            verdict = "beats" if s["mean_bsld"] < best else "does not beat"
            print(
                line(f"agent seed {seed}", s)
                + f"   EASY/agent {easy / s['mean_bsld']:.2f}, {verdict} the best rule"
            )
    for seed, cloned in results["warm_start"].items():
        print(f"seed {seed}: {cloned['line']}")
    if args.out is not None:
        write_json(args.out, results, indent=1)
        print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
