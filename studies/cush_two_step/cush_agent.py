"""CuSH's two-step agent (TwoStepPPO) against the heuristics on held-out CuSH job sets.

Usage: ``python -m studies.cush_two_step.cush_agent [--steps N] [--train-sets K] [--sets M]
[--seed S] [--save PATH]``. Trains :class:`hdeeprm.training.twostep.TwoStepPPO` (job selector
+ policy selector over ``depth_first`` / ``breadth_first``, service-time model on) for ``N``
decision steps on job sets of seeds ``0 .. K - 1``, then plays the ``M`` held-out sets of seeds
10,000 .. 10,000 + M - 1 (those of ``benchmarks/fidelity/cush_scenario.py``) greedily,
beside FCFS, SJF, DRF and Rand in DF and BF form, and prints NTAT, wait, penalty and the
paper's Table 1 (Sierra). Time unit ``t`` = 10 s, so the environment's bounded slowdown
(tau = 10 s) is NTAT.
Prints the training cost in CPU seconds (``time.process_time()``) and steps per CPU second.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from hdeeprm.environment.job_pickers import CUSH_HEURISTICS
from hdeeprm.scenarios.cush import PAPER_TABLE1_SIERRA, CushResult, CushScenario
from hdeeprm.scenarios.cush_agent import CushEnvFactory, play_jobset, prepare_agent_inputs
from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO
from studies.common import REPO

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_480)
    parser.add_argument("--train-sets", type=int, default=1_000)
    parser.add_argument("--sets", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-steps", type=int, default=256, help="rollout length per env")
    parser.add_argument("--save", type=Path, default=None, help="write the agent's weights")
    args = parser.parse_args()
    scenario = CushScenario(PLATFORM, time_unit=TIME_UNIT)
    train = tuple(scenario.jobset(seed) for seed in range(args.train_sets))
    seeds = range(EVAL_FIRST, EVAL_FIRST + args.sets)
    held_out = tuple(scenario.jobset(seed) for seed in seeds)
    with tempfile.TemporaryDirectory() as folder:
        inputs = prepare_agent_inputs(scenario, PLATFORM, train + held_out, folder)
        config = TwoStepConfig(num_envs=2, num_steps=args.num_steps, seed=args.seed)
        factories = [CushEnvFactory(inputs, train, "train") for _ in range(config.num_envs)]
        agent = TwoStepPPO(config, factories)
        tick, wall = time.process_time(), time.perf_counter()
        agent.learn(args.steps)
        train_cpu, train_wall = time.process_time() - tick, time.perf_counter() - wall
        if args.save is not None:
            agent.save(args.save)
        env = CushEnvFactory(inputs, held_out, "eval")()
        tick = time.process_time()
        agent_results = [play_jobset(env, agent.act, k, TIME_UNIT) for k in range(len(held_out))]
        agent_cpu = time.process_time() - tick
        last = [h["objective"] for h in agent.history[-5:] if not math.isnan(h["objective"])]
        agent.close()
    print(
        f"CuSH Sierra-like scenario, two-step agent: trained {agent.global_step} steps on "
        f"{args.train_sets} job sets (seeds 0..{args.train_sets - 1}), agent seed {args.seed}; "
        f"evaluated on {args.sets} held-out sets (seeds {seeds[0]}..{seeds[-1]}), Q = 5, t = 10 s"
    )
    print(
        f"training: {train_cpu:.1f} s CPU ({train_wall:.1f} s wall), "
        f"{agent.global_step / train_cpu:.0f} steps per CPU second, {agent.episodes} episodes; "
        f"training NTAT of the last updates "
        f"{(sum(last) / len(last)) if last else math.nan:.2f}"
    )
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
        diff = [a.ntat - h.ntat for a, h in zip(agent_results, table[name])]
        lower = sum(d < 0 for d in diff)
        mean = math.fsum(diff) / len(diff)
        spread = math.sqrt(math.fsum((d - mean) ** 2 for d in diff) / max(1, len(diff) - 1))
        print(
            f"agent - {name}: NTAT {mean:+.3f} on average (std error "
            f"{spread / math.sqrt(len(diff)):.3f}), lower on {lower} of {len(diff)} sets"
        )


if __name__ == "__main__":
    main()
