"""Shared pieces of the seed-003 experiments: inputs, fixed-pair runs, training, convergence.

Seed 003 (a thesis extending HDeepRM, chapter 4) judges every experiment the same way: run each
of the five policy pairs alone to find the best one for the objective, then train the
actor-critic agent and check that its action preferences converge to that pair. This module
does both on hdeeprm's embedded engine, in-process, so each experiment folder's
``reproduce.py`` is a short list of scenarios. Changing scenarios (objective or workload
changes) train through :class:`Phase` lists with :func:`train_phases`; trace-based ones (Gaia)
convert their window once with :func:`convert_trace`.

The inputs (platform and workload files) are written by :func:`write_inputs`; the committed
copies in each folder are its output (``python thesis_experiments/extension/common.py`` rewrites
them, and a test checks that they match).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import Options, load_options
from hdeeprm.training import run_learning

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
AGENT = REPO / "agent_examples" / "actor_critic.py"

#: The five pairs of every seed-003 experiment, in its figures' order.
ACTIONS = (
    "shortest-high_gflops",
    "shortest-high_mem_bw",
    "shortest-low_power",
    "first-high_gflops",
    "first-high_mem_bw",
)

#: Seed 003's job: one core, 24 GB/s of memory bandwidth, 5 s at 4.2 GFLOPS (21 GFLOP), as
#: in thesis 5.4. Two of them on one 32 GB/s processor over-subscribe it (P1, 75 % speed).
JOB_PROFILE = {
    "type": "parallel_homogeneous",
    "cpu": 21e9,
    "com": 0,
    "req_time": 5.0,
    "req_ops": 21e9,
    "mem": 1000.0,
    "mem_bw": 24.0,
}

#: The speed a job's run time is given at (thesis 5.4: 5 s at 4.2 GFLOPS).
REFERENCE_GFLOPS = 4.2

#: Per-core power of the learning platform's cores (processor power / cores: 80 W / 2 and
#: 100 W / 2); the heterogeneous platform keeps these cores and packs more per processor.
SLOW_CORE_W, FAST_CORE_W = 40.0, 50.0


# --- inputs --------------------------------------------------------------------------------
def basic_platform(nodes: int) -> dict:
    """Seed 003 4.2.1-4.2.2: ``nodes`` copies of the thesis 5.4 node (2 dual-core
    processors, 4 and 4.4 GFLOPS per core, 32 GB/s each): 4 x ``nodes`` cores."""
    return {
        "_doc": f"Seed 003 4.2.2: {nodes} learning node(s) of thesis 5.4.1 ({4 * nodes} cores).",
        "clusters": [
            {
                "id": "learning",
                "nodes": [{"type": "Learning node", "number": nodes}],
                "local_links": [{"type": "InfiniBand QDR", "latency": "1.5us"}],
            }
        ],
        "global_links": [{"type": "Gigabit Ethernet 1000BASE-T", "latency": "125us"}],
    }


def _processor(cores: int, clock: float, core_w: float) -> dict:
    return {
        "type": "CPU",
        "cores": cores,
        "clock_rate": clock,
        "mem_bw": 32,
        "llc_size": 8,
        "power": cores * core_w,
        "dpflops_per_cycle": 4,
    }


def heterogeneous_platform(copies: int) -> dict:
    """Seed 003 4.2.2: ``copies`` x (a node with 16- and 20-core processors at 4 GFLOPS per core
    and a node with 24- and 28-core processors at 4.4), 32 GB/s per processor: 88 x ``copies``
    cores, 4 x ``copies`` processors."""
    return {
        "_doc": (
            f"Seed 003 4.2.2, heterogeneous platform x {copies} ({88 * copies} cores): "
            "per-core power as the thesis 5.4 cores (40 W at 4 GFLOPS, 50 W at 4.4 GFLOPS)."
        ),
        "types": {
            "processor": {
                "S003 slow 16": _processor(16, 1.0, SLOW_CORE_W),
                "S003 slow 20": _processor(20, 1.0, SLOW_CORE_W),
                "S003 fast 24": _processor(24, 1.1, FAST_CORE_W),
                "S003 fast 28": _processor(28, 1.1, FAST_CORE_W),
            },
            "node": {
                "S003 slow node": {
                    "processors": [
                        {"type": "S003 slow 16", "number": 1},
                        {"type": "S003 slow 20", "number": 1},
                    ],
                    "memory": {"type": "DDR3-1600", "capacity": 64},
                },
                "S003 fast node": {
                    "processors": [
                        {"type": "S003 fast 24", "number": 1},
                        {"type": "S003 fast 28", "number": 1},
                    ],
                    "memory": {"type": "DDR3-1600", "capacity": 64},
                },
            },
        },
        "clusters": [
            {
                "id": "heterogeneous",
                "nodes": [
                    {"type": "S003 slow node", "number": copies},
                    {"type": "S003 fast node", "number": copies},
                ],
                "local_links": [{"type": "InfiniBand QDR", "latency": "1.5us"}],
            }
        ],
        "global_links": [{"type": "Gigabit Ethernet 1000BASE-T", "latency": "125us"}],
    }


def workload(
    submit_times: Sequence[float], nb_res: int, doc: str, profile: dict | None = None
) -> dict:
    """Batsim workload of identical one-core jobs submitted at ``submit_times`` (one shared
    profile, so a 1,024-job file stays small); ``profile`` defaults to seed 003's job."""
    return {
        "_doc": doc,
        "nb_res": nb_res,
        "jobs": [
            {"id": str(i + 1), "subtime": t, "res": 1, "profile": "s003"}
            for i, t in enumerate(submit_times)
        ],
        "profiles": {"s003": dict(JOB_PROFILE if profile is None else profile)},
    }


def job_profile(seconds: float, mem_bw: float) -> dict:
    """A one-core job of ``seconds`` at thesis 5.4's 4.2 GFLOPS reference speed that needs
    ``mem_bw`` GB/s (seed 003 4.4.3 describes its jobs by run time and bandwidth)."""
    flop = seconds * REFERENCE_GFLOPS * 1e9
    return {**JOB_PROFILE, "cpu": flop, "req_time": seconds, "req_ops": flop, "mem_bw": mem_bw}


#: Basic scaling series: nodes -> (cores, jobs). Doubling processors and jobs (4.2.2).
BASIC_NODES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Heterogeneous series: copies of the 88-core platform (88 ... 5,632 cores).
HETERO_COPIES = (1, 2, 4, 8, 16, 32, 64)
#: Seed 003 4.3: the second job's submission time in the three two-job workloads.
TWO_JOB_WORKLOADS = {"synchronised": 0.0, "shifted": 2.0, "sequential": 10.0}
#: Seed 003 4.4.3: the two job types of the workload change, (run time s, GB/s), per
#: platform. On 8 cores: 5 s at 24 GB/s, then 40 s at 4 GB/s; on 2,816 cores the first type
#: runs 1 s. Two jobs per workload on 8 cores, 128 (x 64) on 2,816, all at t = 0.
WORKLOAD_CHANGE = {
    "basic_8": (2, {"a": (5.0, 24.0), "b": (40.0, 4.0)}),
    "hetero_2816": (128, {"a": (1.0, 24.0), "b": (40.0, 4.0)}),
}


def input_files() -> dict[Path, dict]:
    """Every committed platform and workload file, by path."""
    files: dict[Path, dict] = {}
    inputs = HERE / "inputs"
    for nodes in BASIC_NODES:
        cores = 4 * nodes
        files[inputs / f"basic_{cores}.platform.json"] = basic_platform(nodes)
        files[inputs / f"basic_{cores}.workload.json"] = workload(
            [0.0] * (2 * nodes),
            cores,
            f"Seed 003 4.2.2: {2 * nodes} jobs at t = 0 (one per processor fits its bandwidth).",
        )
    for copies in HETERO_COPIES:
        cores = 88 * copies
        files[inputs / f"hetero_{cores}.platform.json"] = heterogeneous_platform(copies)
        files[inputs / f"hetero_{cores}.workload.json"] = workload(
            [0.0] * (4 * copies),
            cores,
            f"Seed 003 4.2.2: {4 * copies} jobs at t = 0, one per processor fits.",
        )
    for name, second in TWO_JOB_WORKLOADS.items():
        files[inputs / f"two_jobs_{name}.workload.json"] = workload(
            [0.0, second], 4, f"Seed 003 4.3, '{name}': second job submitted at t = {second} s."
        )
    for platform, (jobs, types) in WORKLOAD_CHANGE.items():
        cores = int(platform.rsplit("_", 1)[1])
        for name, (seconds, mem_bw) in types.items():
            files[inputs / f"change_{name}_{cores}.workload.json"] = workload(
                [0.0] * jobs,
                cores,
                f"Seed 003 4.4.3, workload '{name}': {jobs} jobs at t = 0 of {seconds:g} s "
                f"(at 4.2 GFLOPS) needing {mem_bw:g} GB/s.",
                job_profile(seconds, mem_bw),
            )
    return files


def render(document: dict) -> str:
    """The committed text of an input file (one job per line keeps diffs readable)."""
    if "jobs" not in document:
        return json.dumps(document, indent=2) + "\n"
    head = {k: v for k, v in document.items() if k not in ("jobs", "profiles")}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append('  "jobs": [')
    jobs = [f"    {json.dumps(job)}" for job in document["jobs"]]
    lines.append(",\n".join(jobs))
    lines.append("  ],")
    lines.append(f'  "profiles": {json.dumps(document["profiles"])}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_inputs() -> list[Path]:
    """Write every input file (committed; deterministic)."""
    written = []
    for path, document in input_files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(document))
        written.append(path)
    return written


# --- options -------------------------------------------------------------------------------
def scenario_options(
    options_file: Path,
    platform: str | None,
    *,
    objective: str | None = None,
    seed: int | None = None,
) -> Options:
    """The experiment's options file with its platform replaced by ``inputs/<platform>``
    (``None``: the file's own) and optionally another objective or seed: one options file
    serves a whole series."""
    options = load_options(options_file)
    env = options.env
    if objective is not None:
        env = dataclasses.replace(env, objective=objective)
    platform_file = (
        options.platform_file_path
        if platform is None
        else HERE / "inputs" / f"{platform}.platform.json"
    )
    return dataclasses.replace(
        options,
        platform_file_path=platform_file,
        env=env,
        seed=options.seed if seed is None else seed,
    )


def convert_trace(options: Options, run_dir: Path) -> Path:
    """The options' trace window converted once into ``run_dir/workload.json`` (memory
    bandwidths drawn with the options' seed), so every pair and every training seed then
    plays the same jobs (training seeds would otherwise redraw them)."""
    prepare_inputs(options, run_dir)
    return run_dir / "workload.json"


# --- fixed pairs ---------------------------------------------------------------------------
@dataclass(frozen=True)
class PairResult:
    """One fixed pair's episode: the objective's value, makespan (s), energy (J) and the
    return (sum of the rewards, under the options' reward definition), which is what the agent
    learns from."""

    objective: float
    makespan: float
    energy: float
    ret: float


def run_fixed_pairs(
    options: Options, workload_file: Path, run_dir: Path, seed: int = 0
) -> dict[str, PairResult]:
    """Every action of the options played alone for a whole episode (seed 003's 'classic
    policies' figures)."""
    inputs = prepare_inputs(options, run_dir, custom_workload=workload_file)
    env = HeterogeneousClusterEnv(inputs=inputs)
    results: dict[str, PairResult] = {}
    for action, name in enumerate(env.action_names):
        env.reset(seed=seed)
        terminated = False
        info: dict = {}
        ret = 0.0
        while not terminated:
            _, reward, terminated, _, info = env.step(action)
            ret += float(reward)
        results[name] = PairResult(
            float(info["objective"]), float(info["time"]), float(info["energy"]), ret
        )
    return results


def optimal_pairs(results: dict[str, PairResult], rel_tol: float = 1e-9) -> list[str]:
    """The pairs whose objective equals the best one (ties count: seed 003's 'two optimal
    policies'). Every objective here is a cost."""
    best = min(r.objective for r in results.values())
    return [n for n, r in results.items() if r.objective <= best + abs(best) * rel_tol]


# --- training ------------------------------------------------------------------------------
@dataclass
class TrainingRun:
    """One training run's per-episode probabilities and objectives."""

    names: list[str]
    probabilities: np.ndarray  # (episodes, actions): mean probability over the episode's steps
    objectives: np.ndarray  # (episodes,)
    seconds: float  # CPU seconds (process time)

    def optimal_probability(self, optimal: Sequence[str]) -> np.ndarray:
        idx = [self.names.index(n) for n in optimal]
        return self.probabilities[:, idx].sum(axis=1)

    def converged_at(self, optimal: Sequence[str], threshold: float = 0.9) -> int | None:
        """First episode from which the optimal pairs' probability stays above
        ``threshold`` to the end (``None``: it never does)."""
        p = self.optimal_probability(optimal)
        below = np.flatnonzero(p <= threshold)
        if below.size == 0:
            return 0
        last = int(below[-1]) + 1
        return last if last < len(p) else None


def train(
    options: Options,
    workload_file: Path,
    run_dir: Path,
    episodes: int,
    *,
    in_model: Path | None = None,
    out_model: Path | None = None,
    agent_file: Path = AGENT,
) -> TrainingRun:
    """Train the seed-003 agent (actor-critic by default) for ``episodes`` episodes."""
    inputs = prepare_inputs(options, run_dir, custom_workload=workload_file)
    logs = []
    start = time.process_time()
    run_learning(
        inputs,
        agent_file=agent_file,
        in_model=in_model,
        out_model=out_model,
        nb_runs=episodes,
        progress=False,
        tensorboard=False,
        write_outputs=False,
        on_episode=logs.append,
    )
    return TrainingRun(
        names=options.env.action_names,
        probabilities=np.array([log.probabilities for log in logs]),
        objectives=np.array([log.objective for log in logs]),
        seconds=time.process_time() - start,
    )


@dataclass(frozen=True)
class Phase:
    """One stretch of a changing scenario: the options (objective, platform) and workload
    the agent trains on for ``episodes`` episodes."""

    options: Options
    workload: Path
    episodes: int


def train_phases(phases: Sequence[Phase], mode: str, run_dir: Path) -> list[TrainingRun]:
    """Train through ``phases`` one after the other (seed 003 3.3.1 and 3.3.2).

    ``reset``: a new, untrained agent per phase (each phase's options carry its seed);
    ``continue``: one agent throughout, its network, optimiser and running return
    statistics handed from phase to phase through a checkpoint (``-im``/``-om``).
    """
    if mode not in ("reset", "continue"):
        raise ValueError(f"mode must be 'reset' or 'continue', got {mode!r}")
    runs = []
    model: Path | None = None
    for k, phase in enumerate(phases):
        if mode == "reset":
            runs.append(train(phase.options, phase.workload, run_dir, phase.episodes))
            continue
        out = run_dir / f"phase_{k}.pt"
        runs.append(
            train(
                phase.options,
                phase.workload,
                run_dir,
                phase.episodes,
                in_model=model,
                out_model=out,
            )
        )
        model = out
    return runs


def phase_lengths(counts: Sequence[int], phases: int, parser) -> list[int]:
    """``--phase-episodes``: one count for every phase, or one per phase."""
    if len(counts) == 1:
        return list(counts) * phases
    if len(counts) != phases:
        parser.error(f"--phase-episodes takes 1 or {phases} counts, got {len(counts)}")
    return list(counts)


@dataclass
class PPORun:
    """One PPO run: per-update action frequencies, and the greedy action at the end."""

    names: list[str]
    frequencies: np.ndarray  # (updates, actions): share of each action in the rollout
    objectives: np.ndarray  # (updates,): mean objective of the episodes ended in the rollout
    greedy: str
    seconds: float  # CPU seconds

    def optimal_frequency(self, optimal: Sequence[str]) -> np.ndarray:
        idx = [self.names.index(n) for n in optimal]
        return self.frequencies[:, idx].sum(axis=1)


def train_ppo(
    options: Options,
    workload_file: Path,
    run_dir: Path,
    decisions: int,
    *,
    num_envs: int = 2,
    num_steps: int = 8,
    learning_rate: float = 0.005,
) -> PPORun:
    """The built-in PPO (``"algorithm": "ppo"``) on the scenario: ``decisions`` decision
    steps (one per episode here) in rollouts of ``num_envs x num_steps``; same network width
    and learning rate as the paper's agent, other settings PPOConfig's defaults (2
    minibatches, since a rollout is only 16 decisions)."""
    from hdeeprm.training.ppo import PPOConfig, PPOTrainer, inputs_factories

    inputs = prepare_inputs(options, run_dir, custom_workload=workload_file)
    config = PPOConfig(
        total_timesteps=decisions,
        num_envs=num_envs,
        num_steps=num_steps,
        num_minibatches=2,
        learning_rate=learning_rate,
        gamma=options.agent.gamma,
        hidden=options.agent.hidden,
        seed=options.seed,
    )
    names = options.env.action_names
    start = time.process_time()
    trainer = PPOTrainer(
        config, inputs_factories(inputs, num_envs), run_dir=run_dir, tensorboard=False
    )
    trainer.learn()
    trainer.close()
    with open(run_dir / "training_log.csv", newline="") as log:
        rows = list(csv.DictReader(log))
    frequencies = np.array([[float(row[f"freq_{n}"]) for n in names] for row in rows])
    objectives = np.array([float(row["objective"]) for row in rows])
    env = HeterogeneousClusterEnv(inputs=inputs)
    observation, info = env.reset(seed=options.seed)
    greedy = names[
        int(trainer.predict(observation, deterministic=True, action_mask=info.get("action_mask")))
    ]
    return PPORun(names, frequencies, objectives, greedy, time.process_time() - start)


def ppo_summary(runs: Sequence[PPORun], optimal: Sequence[str], batch: int = 16) -> str:
    """'greedy action optimal in k of n seeds; the optimal pairs' share of each rollout stays
    at or above 0.9 from decision d; share in the last rollout'."""
    good = sum(r.greedy in optimal for r in runs)
    last = [float(r.optimal_frequency(optimal)[-1]) for r in runs]
    greedy = sorted({r.greedy for r in runs})
    starts = []
    for r in runs:
        below = np.flatnonzero(r.optimal_frequency(optimal) < 0.9)
        first = 0 if below.size == 0 else int(below[-1]) + 1
        if first < len(r.frequencies):
            starts.append(first * batch)
    text = f"greedy action optimal in {good} of {len(runs)} seeds ({', '.join(greedy)})"
    if starts:
        text += (
            f"; {len(starts)} of {len(runs)} seeds take optimal pairs in >= 90% of every "
            f"rollout from decision {min(starts)}-{max(starts)}"
        )
    tails = [float(r.objectives[-1]) for r in runs]
    return text + (
        f"; last rollout: optimal share {min(last):.2f}-{max(last):.2f}, "
        f"objective {min(tails):.6g}-{max(tails):.6g}"
    )


def seed_summary(runs: Sequence[TrainingRun], optimal: Sequence[str], last: int = 10) -> str:
    """'k of n seeds above 0.9 to the end, from episode a-b (median m); final p(optimal);
    mean objective of the last ``last`` episodes'."""
    conv = [r.converged_at(optimal) for r in runs]
    done = sorted(c for c in conv if c is not None)
    finals = [float(r.optimal_probability(optimal)[-1]) for r in runs]
    text = f"{len(done)} of {len(runs)} seeds above 0.9 to the end"
    if done:
        text += f", from episode {done[0]}-{done[-1]} (median {int(np.median(done))})"
    text += f"; final p(optimal) {min(finals):.3f}-{max(finals):.3f}"
    tails = [float(r.objectives[-last:].mean()) for r in runs]
    text += f"; objective, last {last} episodes: {min(tails):.6g}-{max(tails):.6g}"
    return text


_SCRATCH: list[tempfile.TemporaryDirectory] = []


def temp_run_dir(prefix: str) -> Path:
    """A fresh folder for generated inputs (platform.xml, ...), inside one temporary folder
    per process that is removed at exit: the committed folders stay clean."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.TemporaryDirectory(prefix="hdeeprm-s003-"))
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=_SCRATCH[0].name))


def run_seeds(
    options_file: Path,
    platform: str,
    workload_file: Path,
    objective: str,
    episodes: int,
    seeds: int,
    ppo_decisions: int,
    tag: str,
) -> tuple[dict[str, PairResult], list[str], list[TrainingRun], list[PPORun]]:
    """One (platform, workload, objective) scenario: every fixed pair, the optimal ones,
    ``seeds`` actor-critic runs and (with ``ppo_decisions``) as many PPO runs, seeds 0, 1, ...
    ``tag`` names the scratch folders."""
    options = scenario_options(options_file, platform, objective=objective)
    pairs = run_fixed_pairs(options, workload_file, temp_run_dir(tag))

    def seeded(seed: int) -> Options:
        return scenario_options(options_file, platform, objective=objective, seed=seed)

    runs = [
        train(seeded(seed), workload_file, temp_run_dir(tag), episodes) for seed in range(seeds)
    ]
    ppo = [
        train_ppo(seeded(seed), workload_file, temp_run_dir(tag), ppo_decisions)
        for seed in range(seeds if ppo_decisions else 0)
    ]
    return pairs, optimal_pairs(pairs), runs, ppo


def print_pairs(results: dict[str, PairResult], unit: str) -> None:
    best = optimal_pairs(results)
    for name, r in results.items():
        mark = "  <- optimal" if name in best else ""
        print(
            f"    {name:24s} objective {r.objective:14.6g} {unit:4s} makespan "
            f"{r.makespan:6.3f} s  energy {r.energy:12.1f} J  return {r.ret:11.5g}{mark}"
        )


def print_phases(
    per_seed: Sequence[Sequence[TrainingRun]],
    lengths: Sequence[int],
    mode: str,
    labels: Sequence[str],
    optimal: Sequence[Sequence[str]],
) -> None:
    """One line per phase of a change experiment (objective or workload change): which seeds
    reached the phase's optimal pairs, with the CPU time of all seeds first."""
    seconds = sum(r.seconds for runs in per_seed for r in runs)
    print(
        f"mode {mode}: phases of {'/'.join(map(str, lengths))} episodes x "
        f"{len(per_seed)} seeds, {seconds:.1f} CPU s"
    )
    for k, (label, best) in enumerate(zip(labels, optimal, strict=True)):
        phase_runs = [runs[k] for runs in per_seed]
        start = sum(lengths[:k])
        print(
            f"  phase {k + 1} (episodes {start}-{start + lengths[k] - 1}), {label}, "
            f"optimal {'/'.join(best)}: {seed_summary(phase_runs, best)}"
        )


if __name__ == "__main__":
    for path in write_inputs():
        print(path.relative_to(REPO))
    sys.exit(0)
