"""CuSH's two-step agent (TwoStepPPO) against the heuristics on held-out CuSH job sets.

Usage: ``python -m studies.cush_two_step.cush_agent [--steps N] [--train-sets K] [--sets M]
[--seed S] [--warm-start SJF] [--critic-warmup U] [--validation V] [--snapshots N
--choose-sets C [--runs R]] [--save PATH]``. Trains
:class:`hdeeprm.training.twostep.TwoStepPPO` (job selector + policy selector over
``depth_first`` / ``breadth_first``, service-time model on) for ``N`` decision steps on job
sets of seeds ``0 .. K - 1``, then plays the ``M`` held-out sets of seeds 10,000 .. 10,000 +
M - 1 (those of ``benchmarks/fidelity/cush_scenario.py``) greedily, beside FCFS, SJF, DRF and
Rand in DF and BF form, and prints NTAT, wait, penalty and the paper's Table 1 (Sierra). Time
unit ``t`` = 10 s, so the environment's bounded slowdown (tau = 10 s) is NTAT.

``--warm-start SJF`` first clones that CuSH heuristic's job choices (breadth-first placement)
on the first ``--warm-sets`` training sets into the job selector
(:mod:`hdeeprm.training.cloning`), so that PPO starts from the best rule;
``--critic-warmup U`` then fits the job selector's critic alone for the first ``U`` PPO
updates. ``--validation V`` chooses settings without the held-out sets: it holds the last
``V`` training sets (seeds ``K - V .. K - 1``) out of training and evaluates on them instead.
``--snapshots N --choose-sets C`` holds the last ``C`` training sets out of training, keeps
the networks at ``N`` evenly spaced PPO updates (and the clone) and plays the held-out sets
with the one of lowest mean NTAT on those ``C`` sets (:mod:`hdeeprm.training.snapshots`).
``--runs R`` (with ``--choose-sets``) trains ``R`` agents for the seed, one after the other,
with seeds ``S, S + 1000, ...`` (each with its own warm start), and chooses among the snapshots
of all of them on the same ``C`` sets: one training run can settle on a plateau that the
choice sets show, and the budget grows ``R`` times. The seed's result is still one agent,
chosen on training sets only.

Prints the training cost in CPU seconds (``time.process_time()``) and steps per CPU second,
and per held-out (or validation) set a paired comparison of the agent against SJF BF, SJF DF
and FCFS BF (:mod:`studies.cush_two_step.paired`).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from hdeeprm.environment.job_pickers import CUSH_HEURISTICS, CushPicker
from hdeeprm.inputs import ExperimentInputs
from hdeeprm.scenarios.cush import PAPER_TABLE1_SIERRA, CushResult, CushScenario
from hdeeprm.scenarios.cush_agent import (
    AGENT_POLICIES,
    CushEnvFactory,
    play_jobset,
    prepare_agent_inputs,
)
from hdeeprm.training.cloning import agreement, clone_job_selector, picker_demonstrations
from hdeeprm.training.snapshots import (
    Snapshot,
    SnapshotKeeper,
    choose_snapshot,
    run_seed,
    train_runs,
)
from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO
from hdeeprm.workload.model import Workload
from studies.common import REPO
from studies.cush_two_step.paired import paired_test
from studies.imitation.picker_cloning import add_cloning_arguments

PLATFORM = REPO / "platform_examples" / "cush_sierra.json"
TIME_UNIT = 10.0
EVAL_FIRST = 10_000


def _row(name: str, results: list[CushResult], cpu: float | str) -> str:
    ntat = math.fsum(r.ntat for r in results) / len(results)
    wait = math.fsum(r.wait for r in results) / len(results)
    penalty = math.fsum(r.penalty for r in results) / len(results)
    paper_ntat, paper_wait = PAPER_TABLE1_SIERRA.get(name, (math.nan, math.nan))
    cpu_text = f"{cpu:>8.1f}" if isinstance(cpu, float) else f"{cpu:>8}"
    return (
        f"{name:<10}{ntat:>8.2f}{wait:>10.2f}{penalty:>9.3f}"
        f"{paper_ntat:>12.2f}{paper_wait:>12.2f}{cpu_text}"
    )


def warm_start(
    agent: TwoStepPPO,
    inputs: ExperimentInputs,
    jobsets: tuple[Workload, ...],
    args: argparse.Namespace,
    seed: int,
) -> str:
    """Clone ``args.warm_start``'s job choices, placed breadth-first, on ``jobsets`` into the
    agent's job selector; a line saying how well the clone agrees."""
    tick = time.process_time()
    env = CushEnvFactory(inputs, jobsets, "eval")()
    demos = picker_demonstrations(
        env,
        CushPicker(args.warm_start, seed),
        (),
        policy=AGENT_POLICIES.index("breadth_first"),
        windows=range(len(jobsets)),
    )
    env.close()
    losses = clone_job_selector(
        agent, demos, epochs=args.warm_epochs, learning_rate=args.warm_lr, seed=seed
    )
    return (
        f"warm start: {args.warm_start} BF's {len(demos)} decisions on {len(jobsets)} training "
        f"sets cloned in {args.warm_epochs} epochs (cross-entropy {losses[0]:.4f} -> "
        f"{losses[-1]:.4f}, agreement {agreement(agent, demos):.4f}), "
        f"{time.process_time() - tick:.1f} s CPU"
    )


def train_run(
    inputs: ExperimentInputs,
    train: tuple[Workload, ...],
    args: argparse.Namespace,
    seed: int,
) -> tuple[TwoStepPPO, list[Snapshot], str]:
    """One agent trained with ``seed`` (warm start, then PPO), its snapshots (the clone first),
    and a line saying how it trained."""
    config = TwoStepConfig(
        num_envs=2,
        num_steps=args.num_steps,
        seed=seed,
        critic_warmup=args.critic_warmup,
    )
    factories = [CushEnvFactory(inputs, train, "train") for _ in range(config.num_envs)]
    agent = TwoStepPPO(config, factories)
    tick, wall = time.process_time(), time.perf_counter()
    lines = []
    if args.warm_start is not None:
        warm = warm_start(agent, inputs, train[: args.warm_sets], args, seed)
        lines.append(f"{warm}; then critic warm-up {args.critic_warmup} updates")
    keeper = SnapshotKeeper(agent, args.steps, args.snapshots)
    if args.warm_start is not None:
        keeper.add("clone")
    if args.steps:
        agent.learn(args.steps, callback=keeper)
    cpu, wall = time.process_time() - tick, time.perf_counter() - wall
    last = [h["objective"] for h in agent.history[-5:] if not math.isnan(h["objective"])]
    lines.append(
        f"training: {cpu:.1f} s CPU ({wall:.1f} s wall, warm start included), "
        f"{agent.global_step / max(cpu, 1e-9):.0f} steps per CPU second, "
        f"{agent.episodes} episodes; training NTAT of the last updates "
        f"{(sum(last) / len(last)) if last else math.nan:.2f}"
    )
    return agent, keeper.kept, "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_480)
    parser.add_argument("--train-sets", type=int, default=1_000)
    parser.add_argument("--sets", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-steps", type=int, default=256, help="rollout length per env")
    parser.add_argument("--save", type=Path, default=None, help="write the agent's weights")
    parser.add_argument(
        "--validation",
        type=int,
        default=0,
        metavar="V",
        help="hold the last V training sets out of training and evaluate on them (not on the "
        "held-out sets)",
    )
    parser.add_argument(
        "--snapshots",
        type=int,
        default=1,
        help="networks kept at evenly spaced PPO updates (and the clone, with --warm-start); "
        "with --choose-sets, the one with the lowest mean NTAT on them plays",
    )
    parser.add_argument(
        "--choose-sets",
        type=int,
        default=0,
        metavar="C",
        help="hold the last C training sets out of training to choose among the snapshots",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        metavar="R",
        help="with --choose-sets: train R agents (seeds S, S + 1000, ...) and choose among "
        "the snapshots of all of them",
    )
    warm = parser.add_argument_group("warm start: clone a CuSH heuristic before PPO")
    warm.add_argument("--warm-start", choices=CUSH_HEURISTICS, default=None)
    warm.add_argument("--warm-sets", type=int, default=100, help="training sets to clone")
    add_cloning_arguments(warm)
    args = parser.parse_args(argv)
    if not 0 <= args.validation < args.train_sets:
        parser.error("--validation must be in 0 .. --train-sets - 1")
    if args.snapshots < 1 or not 0 <= args.choose_sets < args.train_sets:
        parser.error("--snapshots must be >= 1 and --choose-sets in 0 .. --train-sets - 1")
    if (args.snapshots > 1) != (args.choose_sets > 0) or (args.choose_sets and args.validation):
        parser.error("--snapshots N > 1 and --choose-sets go together, without --validation")
    if args.runs < 1 or (args.runs > 1 and not args.choose_sets):
        parser.error("--runs must be >= 1, and above 1 only with --snapshots and --choose-sets")
    scenario = CushScenario(PLATFORM, time_unit=TIME_UNIT)
    n_train = args.train_sets - args.validation - args.choose_sets
    train = tuple(scenario.jobset(seed) for seed in range(n_train))
    choose_seeds = range(n_train, n_train + args.choose_sets)
    choose = tuple(scenario.jobset(seed) for seed in choose_seeds)
    if args.validation:  # training sets only: nothing of the held-out sets is read
        seeds, what = range(n_train, args.train_sets), "validation"
    else:
        seeds, what = range(EVAL_FIRST, EVAL_FIRST + args.sets), "held-out"
    held_out = tuple(scenario.jobset(seed) for seed in seeds)
    with tempfile.TemporaryDirectory() as folder:
        inputs = prepare_agent_inputs(scenario, PLATFORM, train + choose + held_out, folder)
        tick = time.process_time()
        lines: list[str] = []

        def train_one(seed: int) -> tuple[TwoStepPPO, list[Snapshot]]:
            agent, kept, line = train_run(inputs, train, args, seed)
            lines.append(line)
            return agent, kept

        # every run's snapshots, named by run, chosen into the first agent
        agent, kept, steps = train_runs(train_one, args.seed, args.runs)
        choice_line = None
        if args.choose_sets:
            chooser = CushEnvFactory(inputs, choose, "eval")()

            def mean_ntat(picker: TwoStepPPO) -> float:
                results = [
                    play_jobset(chooser, picker.act, k, TIME_UNIT) for k in range(len(choose))
                ]
                return math.fsum(r.ntat for r in results) / len(results)

            sets = f"the {len(choose)} sets {choose_seeds[0]}..{choose_seeds[-1]} (NTAT)"
            choice_line = choose_snapshot(agent, kept, mean_ntat).line(sets)
            chooser.close()
        train_cpu = time.process_time() - tick
        if args.save is not None:
            agent.save(args.save)
        env = CushEnvFactory(inputs, held_out, "eval")()
        tick = time.process_time()
        agent_results = [play_jobset(env, agent.act, k, TIME_UNIT) for k in range(len(held_out))]
        agent_cpu = time.process_time() - tick
        agent.close()
    trained = (
        f"trained {steps} steps"
        if args.runs == 1
        else f"{args.runs} runs of {steps // args.runs} steps"
    )
    print(
        f"CuSH Sierra-like scenario, two-step agent: {trained} on "
        f"{n_train} job sets (seeds 0..{n_train - 1}), agent seed {args.seed}; "
        f"evaluated on {len(seeds)} {what} sets (seeds {seeds[0]}..{seeds[-1]}), Q = 5, t = 10 s"
    )
    for k, line in enumerate(lines):
        if args.runs > 1:
            line = f"run {k + 1} (seed {run_seed(args.seed, k)}): " + line.replace("\n", "\n  ")
        print(line)
    if choice_line is not None:
        print(choice_line)
    print(f"training budget: {train_cpu:.1f} s CPU in all ({args.runs} run(s) and the choice)")
    header = f"{'scheduler':<10}{'NTAT':>8}{'wait (t)':>10}{'penalty':>9}"
    header += f"{'paper NTAT':>12}{'paper wait':>12}{'CPU s':>8}"
    print(header)
    print("-" * len(header))
    table: dict[str, list[CushResult]] = {}
    for name in CUSH_HEURISTICS:
        for policy in ("DF", "BF"):
            tick = time.process_time()
            results = [
                scenario.run(jobs, name, policy, seed=seed) for jobs, seed in zip(held_out, seeds)
            ]
            table[f"{name} {policy}"] = results
            print(_row(f"{name} {policy}", results, time.process_time() - tick))
    print(_row("CuSH", agent_results, agent_cpu))
    for name in ("SJF BF", "SJF DF", "FCFS BF"):
        test = paired_test([a.ntat for a in agent_results], [h.ntat for h in table[name]])
        print(test.line(f"agent - {name} (NTAT)"))


if __name__ == "__main__":
    main()
