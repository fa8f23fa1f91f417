"""A learned scheduler for the comparison: an agent that chooses what EASY backfills.

:class:`BackfillAgentLearner` is a :class:`~hdeeprm.comparison.protocol.Learner` for step 3 of
the protocol. The scheduler stays EASY, with the primary ordering and the run-time predictor
(and correction) of the variant chosen on the seed's training windows: the first job in that
ordering starts when it fits, else it is reserved with those predictions, and the agent chooses
which of the jobs EASY may backfill now starts (``hdeeprm/BackfillChoice-v0``, RLBackfilling's
setting, with the chosen variant in place of plain EASY; the reservation is its starvation
guard). What is learned is the backfill order, which replaces the chosen variant's (FCFS or
SJBF). The agent is :class:`~hdeeprm.training.twostep.TwoStepPPO`'s kernel job selector; ties
between candidates of equal features go to the oldest (``slot_order_bias``), as the rules
break them. With ``members`` above 1, that many agents are trained per seed and act together
(:class:`BackfillEnsemble`); with ``runs`` above 1, that many are trained per seed and one
network is chosen among all their snapshots on the training windows.

It trains on windows of ``window_jobs`` jobs drawn at random from the whole training range
(the comparison's training part: no held-out job), with the training seed. Its observation
is scaled by the training part's job limits, kept for every window it plays after, of this
trace or another (transfer). Played on a comparison's windows with the rule "always the
oldest candidate" (or "the shortest") the environment is the EASY variant with that backfill
order as :func:`~hdeeprm.comparison.replay.replay` plays it, job for job
(``tests/comparison/test_backfill_agent.py``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hdeeprm.comparison.protocol import SeedContext
from hdeeprm.comparison.replay import PLACEMENT, WindowScore, window_score
from hdeeprm.comparison.setting import TraceSetting, Windows
from hdeeprm.comparison.variants import label, variant
from hdeeprm.environment.backfill_choice import BackfillChoiceEnv, easy_pick, sjbf_pick
from hdeeprm.environment.episodes import WorkloadEpisodes, window_workload
from hdeeprm.inputs import ExperimentInputs, prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.scheduling.config import HeuristicTriple
from hdeeprm.workload.limits import JobLimits
from hdeeprm.workload.model import Workload

if TYPE_CHECKING:
    from hdeeprm.training.cloning import WarmStart

Picker = Callable[[BackfillChoiceEnv], int]

#: Candidates the agent sees at once (the oldest ones; more are offered as these start).
QUEUE_SLOTS = 128
#: Seeds of an ensemble's members ``1, 2, ...`` are the training seed plus this times ``k``
#: (times ``runs``, so that no two runs of any members share a seed).
MEMBER_SEED_STRIDE = 1000
#: The EASY variants' backfill orders as pickers of ``BackfillChoice-v0`` (what a warm start
#: clones).
RULES: dict[str, Picker] = {"FCFS": easy_pick, "SPF": sjbf_pick}
#: Reservations with the users' requested times (plain EASY).
ESTIMATES = HeuristicTriple()
#: PPO's discount unless the learner says otherwise (the label names any other).
GAMMA = 0.99


def agent_inputs(
    setting: TraceSetting,
    workload: Workload,
    folder: Path,
    *,
    window_jobs: int | None = None,
    limits: JobLimits | None = None,
) -> ExperimentInputs:
    """Environment inputs for ``workload`` on ``setting``'s platform, prepared in ``folder``:
    with ``window_jobs``, training episodes are windows drawn from the whole of it; ``limits``
    replaces the job limits computed from it (the observation's scales)."""
    folder.mkdir(parents=True, exist_ok=True)
    env: dict[str, Any] = {"objective": "avg_job_slowdown"}
    if window_jobs is not None:
        env["episodes"] = {"window_jobs": window_jobs, "train_jobs": [0, len(workload.jobs)]}
    options = {
        "seed": 0,
        "platform_file_path": str(setting.platform_path.resolve()),
        "pybatsim": {"env": env, "agent": {"type": "LEARNING", "run": "train"}},
    }
    (folder / "options.json").write_text(json.dumps(options, indent=1))
    workload.save(folder / "jobs.json")
    inputs = prepare_inputs(
        load_options(folder / "options.json"), folder / "run", custom_workload=folder / "jobs.json"
    )
    return inputs if limits is None else dataclasses.replace(inputs, job_limits=limits)


def play_windows(
    windows: Windows,
    pick: Picker,
    limits: JobLimits | None = None,
    ordering: str = "FCFS",
    triple: HeuristicTriple = ESTIMATES,
) -> list[WindowScore]:
    """Every window of ``windows`` in ``BackfillChoice-v0`` with EASY's primary ``ordering``
    and ``triple``'s predictor and correction, each candidate chosen by ``pick(env)``, with
    the figures :func:`~hdeeprm.comparison.replay.replay` gives."""
    setting = windows.setting
    workloads = [windows.workload(k) for k in range(len(windows))]
    with tempfile.TemporaryDirectory(prefix="hdeeprm-compare-") as tmp:
        inputs = agent_inputs(setting, workloads[0], Path(tmp), limits=limits)
        env = BackfillChoiceEnv(
            inputs,
            split="all",
            queue_slots=QUEUE_SLOTS,
            core_policy=PLACEMENT[1],
            ordering=ordering,
            predictor=triple.predictor,
            correction=triple.correction,
        )
        env.windows = WorkloadEpisodes(workloads, "eval")
        env.split = "eval"
        scores = []
        for k in range(len(workloads)):
            env.reset(options={"window": k})
            done = env.finished
            while not done:
                _, _, done, _, _ = env.step(pick(env))
            assert env.engine is not None
            scores.append(window_score(env.engine, workloads[k], "BackfillChoice-v0"))
        env.close()
    return scores


@dataclass
class BackfillEnsemble:
    """Agents trained with different seeds acting together: the greedy action of the mean of
    their action probabilities. Why: one agent's held-out figures vary from seed to seed by
    more than the margins at stake; averaging members needs no choice among them."""

    members: list[Any]

    def act(self, env: Any) -> int:
        """The most probable allowed candidate, the members' probabilities averaged."""
        import torch  # with the agents: the comparison's baselines need no torch

        obs = torch.as_tensor(np.asarray(env.observation(), dtype=np.float32)).unsqueeze(0)
        mask = torch.as_tensor(np.asarray(env.action_masks(), dtype=bool)).reshape(1, -1)
        with torch.no_grad():
            total = torch.zeros(mask.shape[1])
            for member in self.members:
                total += torch.softmax(member.job_net.logits(obs, mask), -1)[0]
        return int(total.argmax())


@dataclass
class TrainedBackfillAgent:
    """A trained agent (its greedy choice plays) and the scales it observes with."""

    agent: Any
    limits: JobLimits
    ordering: str
    timesteps: int
    triple: HeuristicTriple = ESTIMATES
    warm: WarmStart | None = None
    #: Which snapshot was kept, when several were compared on the training windows, and
    #: every one compared: (name, mean bounded slowdown on the training windows).
    kept: str = ""
    candidates: tuple[tuple[str, float], ...] = ()
    #: Agents averaged (:class:`BackfillEnsemble`); 1: ``agent`` is one PPO agent.
    members: int = 1
    #: Runs whose snapshots the kept network was chosen among (:attr:`BackfillAgentLearner.
    #: runs`).
    runs: int = 1
    #: PPO's discount (:attr:`BackfillAgentLearner.gamma`).
    gamma: float = GAMMA

    def describe(self) -> str:
        start = (
            ""
            if self.warm is None
            else f" after cloning {self.warm.rule} ({self.warm.agreement:.2f} agreement)"
        )
        kept = f", {self.kept}" if self.kept else ""
        # the variant's own label, with the agent as its backfill order
        name = label(variant(self.ordering, "FCFS", self.triple.predictor, self.triple.correction))
        name = name.replace(f"({self.ordering}/FCFS;", f"({self.ordering}/agent;")
        many = "" if self.members == 1 else f"{self.members} agents averaged, each "
        if self.runs > 1:
            many += f"best of {self.runs} runs of "
        discount = "" if self.gamma == GAMMA else f" (gamma {self.gamma:g})"
        return f"{name}, {many}PPO {self.timesteps} steps{discount}{start}{kept}"

    def play(self, windows: Windows) -> list[WindowScore]:
        return play_windows(windows, self.agent.act, self.limits, self.ordering, self.triple)


@dataclass(frozen=True)
class BackfillAgentLearner:
    """Train a backfilling agent per seed (module docstring); PPO's budget and shape."""

    timesteps: int = 196_608
    num_envs: int = 2
    num_steps: int = 1024
    minibatch: int = 256
    learning_rate: float = 3e-4
    #: PPO's discount per decision. 1: the return is minus the window's mean bounded slowdown
    #: itself (the rewards telescope to it); below 1 weighs the next few hundred decisions
    #: only, a shorter-sighted objective than the one the windows are judged on.
    gamma: float = GAMMA
    #: Training windows on which the chosen variant's backfill rule (oldest or shortest
    #: candidate first) is cloned into the agent before PPO (0: PPO from scratch).
    warm_windows: int = 0
    warm_epochs: int = 20
    #: PPO updates that fit the critic alone after the clone (its advantages start as noise).
    critic_warmup: int = 0
    #: Snapshots of the network taken at evenly spaced PPO updates (the last at the end); with
    #: 2 or more, the one with the lowest mean on the seed's training windows is kept (the
    #: clone, with a warm start, is a candidate too). 1: the final network.
    snapshots: int = 1
    #: :attr:`~hdeeprm.training.twostep.TwoStepConfig.slot_order_bias`: a small value breaks
    #: ties between equal candidates towards the oldest, as the rules do (a clone can then
    #: play its rule exactly); 0: no tie-break.
    slot_order_bias: float = 1e-3
    #: Agents trained per seed, each as above, that act as a :class:`BackfillEnsemble`. The
    #: first trains with the seed itself (it is the single agent of ``members=1``), member
    #: ``k`` with :meth:`member_seed` (``seed + MEMBER_SEED_STRIDE * k`` with one run). The
    #: budget is ``members`` times one's.
    members: int = 1
    #: Runs trained per agent, one after the other (seeds ``S``, ``S + 1000``, ...: the run
    #: ``k`` of :func:`~hdeeprm.training.snapshots.train_runs`), whose snapshots are all
    #: candidates of the choice on the training windows (needs ``snapshots`` >= 2): a run
    #: that stays on a plateau is passed over. The budget is ``runs`` times one's.
    runs: int = 1

    name: ClassVar[str] = "backfill-choice"

    def __post_init__(self) -> None:
        for key in (
            "timesteps",
            "num_envs",
            "num_steps",
            "minibatch",
            "warm_epochs",
            "snapshots",
            "members",
            "runs",
        ):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")
        for key in ("warm_windows", "critic_warmup"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be >= 0, got {getattr(self, key)}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        if not 0 < self.gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")
        if self.runs > 1 and self.snapshots < 2:
            raise ValueError("runs above 1 need snapshots >= 2 (the choice among the runs)")
        if not self.slot_order_bias >= 0:
            raise ValueError(f"slot_order_bias must be >= 0, got {self.slot_order_bias}")

    def train(self, context: SeedContext) -> tuple[TrainedBackfillAgent, list[WindowScore]]:
        first, scores = self._train_one(context, context.seed, score=self.members == 1)
        if self.members == 1:
            return first, scores
        agents = [first.agent]
        kept = [first.kept]
        for k in range(1, self.members):
            seed = self.member_seed(context.seed, k)
            member, _ = self._train_one(context, seed, score=False)
            agents.append(member.agent)
            kept.append(member.kept)
        trained = dataclasses.replace(
            first,
            agent=BackfillEnsemble(agents),
            members=self.members,
            kept="; ".join(k for k in kept if k),
            candidates=(),
        )
        return trained, trained.play(context.train)

    def member_seed(self, seed: int, k: int) -> int:
        """The training seed of ensemble member ``k`` (from 0): its runs then take the next
        ``runs`` seeds of stride :data:`MEMBER_SEED_STRIDE` (:func:`~hdeeprm.training.
        snapshots.train_runs`), so the members' runs never share one."""
        return seed + MEMBER_SEED_STRIDE * k * self.runs

    def _train_one(
        self, context: SeedContext, seed: int, score: bool = True
    ) -> tuple[TrainedBackfillAgent, list[WindowScore]]:
        """One agent trained with ``seed`` (cloned, trained, its snapshot chosen among those
        of its ``runs``) and, if ``score`` or to choose a snapshot, its figures on the training
        windows."""
        from hdeeprm.training.snapshots import choose_snapshot, train_runs

        ordering, triple = context.baseline.primary, context.baseline.triple
        runs: list[tuple[JobLimits, WarmStart | None]] = []

        def train_run(run_seed: int) -> tuple[Any, list[Any]]:
            agent, kept, limits, warm = self._train_run(context, run_seed)
            runs.append((limits, warm))
            return agent, kept

        agent, kept, _ = train_runs(train_run, seed, self.runs)
        limits, warm = runs[0]
        trained = TrainedBackfillAgent(
            agent,
            limits,
            ordering,
            self.timesteps,
            triple,
            warm,
            gamma=self.gamma,
            runs=self.runs,
        )
        if len(kept) < 2:
            return trained, trained.play(context.train) if score else []
        played: list[list[WindowScore]] = []  # each snapshot's, in order

        def mean_on_training(_agent: Any) -> float:
            played.append(trained.play(context.train))
            return math.fsum(s.mean_bsld for s in played[-1]) / len(played[-1])

        choice = choose_snapshot(agent, kept, mean_on_training)
        trained.kept = f"{choice.name} kept ({choice.score:.2f} on the training windows)"
        trained.candidates = choice.scores
        names = [snapshot.name for snapshot in kept]
        return trained, played[names.index(choice.name)]

    def _train_run(
        self, context: SeedContext, seed: int
    ) -> tuple[Any, list[Any], JobLimits, WarmStart | None]:
        """One PPO run with ``seed`` on the training part: the agent, its snapshots (the
        clone first, with a warm start), the observation's scales and the warm start."""
        from hdeeprm.training.cloning import clone_rule
        from hdeeprm.training.snapshots import SnapshotKeeper
        from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO, job_selection_factories

        protocol, setting = context.protocol, context.train.setting
        ordering, triple = context.baseline.primary, context.baseline.triple
        part = window_workload(
            setting.workload, protocol.train.first, protocol.train.stop - protocol.train.first
        )
        config = TwoStepConfig(
            total_timesteps=self.timesteps,
            num_envs=self.num_envs,
            num_steps=self.num_steps,
            num_minibatches=max(1, self.num_envs * self.num_steps // self.minibatch),
            learning_rate=self.learning_rate,
            gamma=self.gamma,
            seed=seed,
            critic_warmup=self.critic_warmup,
            slot_order_bias=self.slot_order_bias,
        )
        with tempfile.TemporaryDirectory(prefix="hdeeprm-compare-") as tmp:
            inputs = agent_inputs(setting, part, Path(tmp), window_jobs=protocol.window_jobs)
            fns = job_selection_factories(
                inputs,
                self.num_envs,
                "train",
                backfill_choice=True,
                queue_slots=QUEUE_SLOTS,
                core_policy=PLACEMENT[1],
                ordering=ordering,
                predictor=triple.predictor,
                correction=triple.correction,
            )
            agent = TwoStepPPO(config, fns)
            warm = None
            if self.warm_windows:
                rule = context.baseline.backfill
                env = fns[0]()
                warm = clone_rule(
                    agent,
                    env,
                    RULES[rule],
                    f"{ordering}/{rule}",
                    seed=seed,
                    windows=self.warm_windows,
                    epochs=self.warm_epochs,
                )
                env.close()
            keeper = SnapshotKeeper(agent, self.timesteps, self.snapshots)
            if warm is not None:
                keeper.add("clone")
            agent.learn(self.timesteps, callback=keeper)
            agent.close()
        return agent, keeper.kept, inputs.job_limits, warm


__all__ = [
    "BackfillAgentLearner",
    "BackfillEnsemble",
    "TrainedBackfillAgent",
    "agent_inputs",
    "play_windows",
]
