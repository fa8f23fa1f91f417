"""Job selection on lublin_256 (RLScheduler's protocol): a learned picker beside the heuristics.

Scenario: ``lublin_256.swf.gz`` (10,000 synthetic jobs, 256 cores) on
``platform_examples/lublin_256.json``, requested times as walltimes; episodes are windows of
1,024 consecutive jobs (the ``pybatsim.env.episodes`` API): training windows are drawn from
jobs ``[0, 7000)``, evaluation windows are fixed, drawn once from the later jobs
``[7000, 10000)``. Objective: average bounded slowdown (tau = 10 s); the environment is
:class:`hdeeprm.environment.JobSelectionEnv` with ``Q = 128`` visible jobs, without and with
EASY backfilling around the chosen job.

Every picker acts in the same environment through the same actions: the heuristics FCFS,
SJF, WFP3, UNICEP and F1 (:mod:`hdeeprm.environment.job_pickers`) and a learned agent, one
per mode, trained by ``--trainer``:

* ``sb3``: sb3-contrib's ``MaskablePPO``, by default with a "kernel" policy that scores each
  visible job with one shared MLP (:func:`kernel_policy`), or ``--policy mlp``;
* ``hdeeprm``: the project's own PPO, :class:`hdeeprm.training.twostep.TwoStepPPO` (its
  kernel job selector; with ``--policies a,b`` also CuSH's policy selector, the environment's
  second step choosing the core policy of each picked job).

The table gives the mean bounded slowdown over the evaluation windows, wall time,
environment steps per second, and the worst wait (hours) and worst bounded slowdown of any job
in them; training cost is printed beside it. ``--validate`` evaluates
on validation windows drawn (seed 1) from the *training* range instead of the held-out ones:
tune there, report on the held-out windows. ``--max-wait H`` turns on the environment's
starvation guard for training and evaluation (a job that has waited ``H`` hours starts as
soon as it fits; with backfilling it is reserved, and only jobs that cannot delay it may be
picked meanwhile); the heuristics are then printed both with and without it.

    python -m studies.job_selection_lublin.job_selection_benchmark --quick  # minutes
    python -m studies.job_selection_lublin.job_selection_benchmark  # full: 10 windows, longer
    python -m studies.job_selection_lublin.job_selection_benchmark --quick --trainer hdeeprm

The trace is found through ``HDEEPRM_TRACES`` or the cache of ``hdeeprm-traces fetch``
(``--traces`` to give its folder).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.analysis.metrics import ended_job_metrics
from hdeeprm.environment import BASELINES, HeuristicPicker, JobSelectionEnv
from hdeeprm.environment.episodes import EpisodeWindows
from hdeeprm.environment.job_selection import GUARD_FEATURES, JOB_FEATURES, LOG_FEATURES
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training.cloning import clone_rule
from hdeeprm.training.snapshots import (
    Snapshot,
    SnapshotKeeper,
    acting_state,
    choose_snapshot,
    load_acting_state,
    train_runs,
)
from studies.common import REPO, trace
from studies.imitation.picker_cloning import add_cloning_arguments

TRACE = "lublin_256.swf.gz"
PLATFORM = REPO / "platform_examples" / "lublin_256.json"
WINDOW = 1024
TRAIN = (0, 7000)
EVAL = (7000, 10000)
SLOTS = 128
#: RLScheduler's own protocol (``--rlscheduler``): 256-job training sequences and 1,024-job
#: test sequences, both starting anywhere in the trace's 10,000 jobs (starts in
#: ``[L, n - L - 1)``, as RLScheduler draws them), and its visible queue and backfilling.
RLS_TRAIN_WINDOW = 256
RLS_TRAIN = (256, 9999)
RLS_EVAL = (1024, 9999)


def write_options(
    folder: Path, traces: Path, eval_windows: int, seed: int, rlscheduler: bool = False
) -> Path:
    window, train = (RLS_TRAIN_WINDOW, RLS_TRAIN) if rlscheduler else (WINDOW, TRAIN)
    raw = {
        "seed": seed,
        "workload_file_path": str(traces / TRACE),
        "platform_file_path": str(PLATFORM),
        "use_walltime": True,
        "pybatsim": {
            "env": {
                "objective": "avg_job_slowdown",
                "episodes": {
                    "window_jobs": window,
                    "train_jobs": list(train),
                    "eval_jobs": list(EVAL),
                    "eval_windows": eval_windows,
                    "eval_seed": 0,
                },
            },
            "agent": {"type": "LEARNING", "run": "train"},
        },
    }
    if rlscheduler:  # no held-out part: test sequences are drawn over the whole trace
        episodes = raw["pybatsim"]["env"]["episodes"]  # type: ignore[index]
        for key in ("eval_jobs", "eval_windows", "eval_seed"):
            del episodes[key]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "options.json"
    path.write_text(json.dumps(raw, indent=1))
    return path


def evaluate(env: JobSelectionEnv, pick) -> tuple[list[float], int, float, float, float]:
    """Bounded slowdown per evaluation window, steps, wall time, and over all the windows the
    worst wait (hours) and the worst bounded slowdown: a low mean may hide a starved job."""
    values, steps, start = [], 0, time.perf_counter()
    worst_wait = worst_bsld = 0.0
    for k in range(env.nb_eval_windows):
        env.reset(options={"window": k})
        done = env.finished
        while not done:
            _, _, done, _, _ = env.step(pick(env))
            steps += 1
        values.append(env.objective_value())
        m = ended_job_metrics(env.engine.finished_jobs)
        worst_wait = max(worst_wait, m.max_waiting / 3600.0)
        worst_bsld = max(worst_bsld, m.max_bounded_slowdown)
    return values, steps, time.perf_counter() - start, worst_wait, worst_bsld


def kernel_policy(slots: int, width: int, nothing_bias: float = 0.0, hidden: int = 32):
    """A MaskablePPO policy that scores every slot with one shared MLP (RLScheduler's
    "kernel" network): the same job gets the same score in any slot, and the network's size
    does not grow with ``Q``. Do nothing is scored from the cluster features and the mean
    embedding of the visible jobs; the critic reads the same features through its own MLP.
    ``nothing_bias`` starts do nothing's logit there (negative: an untrained agent rarely
    lets time run while jobs fit)."""
    import torch as th
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn

    class SlotScores(BaseFeaturesExtractor):
        def __init__(self, observation_space) -> None:
            context = observation_space.shape[0] - slots * width
            super().__init__(observation_space, features_dim=slots + 1 + hidden)
            self.context = context
            self.embed = nn.Sequential(
                nn.Linear(width + context, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
            )
            self.score = nn.Linear(hidden, 1)
            self.nothing = nn.Sequential(
                nn.Linear(context + hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1)
            )

        def forward(self, obs: th.Tensor) -> th.Tensor:
            jobs = obs[:, : slots * width].reshape(-1, slots, width)
            context = obs[:, slots * width :]
            both = th.cat([jobs, context.unsqueeze(1).expand(-1, slots, -1)], dim=2)
            embedded = self.embed(both)
            present = (jobs[:, :, 2:3] > 0).float()  # a job requests at least one core
            pooled = (embedded * present).sum(1) / present.sum(1).clamp(min=1.0)
            scores = self.score(embedded).squeeze(2)
            nothing = self.nothing(th.cat([context, pooled], dim=1))
            return th.cat([scores, nothing, pooled], dim=1)

    class Logits(nn.Module):
        def forward(self, latent: th.Tensor) -> th.Tensor:
            return latent[:, : slots + 1]

    class KernelPolicy(MaskableActorCriticPolicy):
        def _build(self, lr_schedule) -> None:
            super()._build(lr_schedule)
            self.action_net = Logits()  # the slot scores are the logits
            with th.no_grad():
                self.features_extractor.nothing[-1].bias.fill_(nothing_bias)
            self.optimizer = self.optimizer_class(
                self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
            )

    kwargs = {
        "features_extractor_class": SlotScores,
        "net_arch": {"pi": [], "vf": [64, 64]},
    }
    return KernelPolicy, kwargs


def twostep_config(args, seed: int, critic_warmup: int = 0):
    """``TwoStepPPO``'s configuration from the options the job selection scripts share
    (``--timesteps --envs --n-steps --batch --lr --gamma --nothing-bias``)."""
    from hdeeprm.training.twostep import TwoStepConfig

    return TwoStepConfig(
        total_timesteps=args.timesteps,
        num_envs=args.envs,
        num_steps=args.n_steps,
        num_minibatches=max(1, args.envs * args.n_steps // args.batch),
        learning_rate=args.lr,
        gamma=args.gamma,
        nothing_bias=args.nothing_bias,
        seed=seed,
        critic_warmup=critic_warmup,
    )


def train_hdeeprm(inputs, backfill: bool, args, validation=None):
    """The project's trainer: :class:`~hdeeprm.training.twostep.TwoStepPPO`; returns the
    agent, the snapshots kept, the training wall time, CPU time and steps.

    With ``args.snapshots`` > 1 the acting networks are kept at evenly spaced PPO updates
    (the last at the end: :class:`~hdeeprm.training.snapshots.SnapshotKeeper`) and the one
    with the lowest mean bounded slowdown on the ``validation`` environment's windows is kept
    (the earliest among equals): a choice that never reads the test windows. Its line is
    printed. With ``args.runs`` > 1, that many agents train one after the other (seeds
    ``S``, ``S + 1000``, ...) and the choice passes over the snapshots of all of them."""
    from hdeeprm.training.twostep import TwoStepPPO, job_selection_factories

    fns = job_selection_factories(
        inputs,
        args.envs,
        "train",
        backfill=backfill,
        queue_slots=SLOTS,
        policies=args.policies,
        log_features=args.log_features,
        rlscheduler=args.rlscheduler,
        max_wait=max_wait_seconds(args),
    )

    def train_one(seed: int) -> tuple[TwoStepPPO, list[Snapshot]]:
        config = twostep_config(args, seed, critic_warmup=args.critic_warmup)
        agent = TwoStepPPO(config, fns)
        if args.warm_start is not None:
            print(warm_start(agent, inputs, backfill, args, seed), flush=True)
        keeper = SnapshotKeeper(agent, args.timesteps, args.snapshots)
        agent.learn(args.timesteps, callback=keeper)
        return agent, keeper.kept

    start, cpu = time.perf_counter(), time.process_time()
    agent, kept, steps = train_runs(train_one, args.seed, args.runs)
    if len(kept) > 1:

        def mean_on_validation(picker) -> float:
            return float(np.mean(evaluate(validation, picker.act)[0]))

        choice = choose_snapshot(agent, kept, mean_on_validation)
        starts = ", ".join(map(str, validation.windows.eval_starts))
        print(f"({choice.line(f'the validation windows starting at jobs [{starts}]')})")
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    agent.close()
    return agent, kept, wall, cpu, steps


def report_snapshots(agent, snapshots, env: JobSelectionEnv) -> None:
    """Print every snapshot's mean on ``env``'s (test) windows, then restore the agent's
    weights: whether the validation windows predicted the test ones, never used for the
    choice."""
    kept = acting_state(agent)
    for snapshot in snapshots:
        load_acting_state(agent, snapshot.state)
        values = evaluate(env, agent.act)[0]
        mean = np.mean(values)
        print(f"  (not used for the choice) {snapshot.name}: {mean:.2f} on the test windows")
    load_acting_state(agent, kept)


def validation_env(inputs, options, backfill: bool, args) -> JobSelectionEnv:
    """The windows that choose among snapshots: ``--validation-windows`` drawn with seed 1
    (the test windows use seed 0), from the training range, or in RLScheduler's protocol
    1,024-job sequences over the whole trace, as its test sequences are drawn."""
    env = training_env(inputs, backfill, args)
    jobs = RLS_EVAL if args.rlscheduler else TRAIN
    env.windows = fixed_windows(inputs, options, jobs, args.validation_windows, seed=1)
    return env


def fixed_windows(inputs, options, jobs: tuple[int, int], count: int, seed: int):
    """``count`` windows of :data:`WINDOW` jobs drawn once with ``seed`` from ``jobs``."""
    episodes = dataclasses.replace(
        options.env.episodes,
        window_jobs=WINDOW,
        eval_jobs=jobs,
        eval_windows=count,
        eval_seed=seed,
    )
    return EpisodeWindows(inputs.workload, episodes, "eval")


def max_wait_seconds(args) -> float | None:
    """The starvation guard's bound in seconds (``--max-wait`` is in hours), or None."""
    return None if args.max_wait is None else args.max_wait * 3600.0


def training_env(inputs, backfill: bool, args) -> JobSelectionEnv:
    """A job selection environment drawing training windows, as the options ask."""
    return JobSelectionEnv(
        inputs=inputs,
        split="train",
        backfill=backfill,
        queue_slots=SLOTS,
        log_features=args.log_features,
        rlscheduler=args.rlscheduler,
        max_wait=max_wait_seconds(args),
    )


def warm_start(agent, inputs, backfill: bool, args, seed: int) -> str:
    """Clone ``args.warm_start``'s picks on ``args.warm_windows`` training windows (drawn by
    seeds of their own) into ``agent``'s job selector; a line saying how well it agrees."""
    env = training_env(inputs, backfill, args)
    try:
        cloned = clone_rule(
            agent,
            env,
            HeuristicPicker(args.warm_start),
            args.warm_start,
            seed=seed,
            windows=args.warm_windows,
            epochs=args.warm_epochs,
            learning_rate=args.warm_lr,
        )
    finally:
        env.close()
    return f"({cloned.line()})"


def train(inputs, backfill: bool, args) -> tuple[object, float, int]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    torch.set_num_threads(1)  # small networks: threads only contend on a shared machine

    def factory(i: int):
        def make():
            env = training_env(inputs, backfill, args)
            env.reset(seed=args.seed + i)
            return env

        return make

    # Returns are minus bounded slowdowns (tens to thousands): scale them for the critic.
    vec = VecNormalize(
        DummyVecEnv([factory(i) for i in range(args.envs)]),
        norm_obs=False,
        norm_reward=True,
        gamma=args.gamma,
    )
    width = len(JOB_FEATURES) + (len(LOG_FEATURES) if args.log_features else 0)
    width += len(GUARD_FEATURES) if args.max_wait is not None else 0
    if args.policy == "kernel":
        policy, policy_kwargs = kernel_policy(SLOTS, width, args.nothing_bias)
    else:
        policy, policy_kwargs = "MlpPolicy", {"net_arch": [128, 64]}
    model = MaskablePPO(
        policy,
        vec,
        n_steps=args.n_steps,
        batch_size=args.batch,
        n_epochs=4,
        learning_rate=args.lr,
        gamma=args.gamma,
        ent_coef=0.0,
        seed=args.seed,
        device="cpu",
        policy_kwargs=policy_kwargs,
    )
    start = time.perf_counter()
    model.learn(args.timesteps)
    return model, time.perf_counter() - start, int(model.num_timesteps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short training, 4 eval windows")
    parser.add_argument("--traces", type=Path, default=None)
    parser.add_argument("--timesteps", type=int, default=None, help="PPO steps per mode")
    parser.add_argument("--eval-windows", type=int, default=None)
    parser.add_argument("--envs", type=int, default=2)
    parser.add_argument("--n-steps", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--policy", choices=("kernel", "mlp"), default="kernel", help="see kernel_policy()"
    )
    parser.add_argument("--modes", default="plain,backfill")
    parser.add_argument(
        "--nothing-bias", type=float, default=-3.0, help="initial do-nothing logit (kernel)"
    )
    parser.add_argument(
        "--trainer",
        choices=("sb3", "hdeeprm"),
        default="sb3",
        help="MaskablePPO (sb3-contrib) or the project's TwoStepPPO",
    )
    parser.add_argument(
        "--policies",
        default=None,
        help="comma-separated core policies: the two-step agent (--trainer hdeeprm only)",
    )
    parser.add_argument(
        "--validate",
        action="store_true",
        help="evaluate on validation windows from the training range (seed 1), for tuning",
    )
    parser.add_argument(
        "--log-features", action="store_true", help="log-scaled job features (the environment's)"
    )
    parser.add_argument("--no-heuristics", action="store_true", help="only the agent's row")
    parser.add_argument(
        "--max-wait",
        type=float,
        default=None,
        metavar="HOURS",
        help="starvation guard, in training and evaluation: a job that has waited this long "
        "starts as soon as it fits (with backfilling it is reserved, and only jobs that cannot "
        "delay it may be picked); the heuristics are printed with and without it",
    )
    parser.add_argument(
        "--rlscheduler",
        action="store_true",
        help="RLScheduler's own protocol: its visible queue and backfilling rule, 256-job "
        "training and 1,024-job test sequences drawn over the whole trace",
    )
    warm = parser.add_argument_group("warm start: clone a heuristic before PPO (--trainer hdeeprm)")
    warm.add_argument("--warm-start", choices=BASELINES, default=None)
    warm.add_argument("--warm-windows", type=int, default=16, help="training windows to clone")
    add_cloning_arguments(warm)
    chosen = parser.add_argument_group(
        "snapshot choice: keep the best of several networks on validation windows "
        "(--trainer hdeeprm)"
    )
    chosen.add_argument(
        "--snapshots",
        type=int,
        default=1,
        help="networks kept at evenly spaced PPO updates (the last at the end)",
    )
    chosen.add_argument(
        "--validation-windows",
        type=int,
        default=10,
        help="windows that choose among the snapshots, drawn with seed 1: from the training "
        "range, or with --rlscheduler 1,024-job sequences over the whole trace as its test ones",
    )
    chosen.add_argument(
        "--runs",
        type=int,
        default=1,
        metavar="R",
        help="train R agents one after the other (seeds S, S + 1000, ...) and choose among the "
        "snapshots of all of them (with --snapshots)",
    )
    chosen.add_argument(
        "--report-snapshots",
        action="store_true",
        help="after the table, every snapshot's mean on the test windows (a diagnostic: "
        "whether validation predicted them; the choice never reads them)",
    )
    args = parser.parse_args(argv)
    if args.snapshots < 1 or args.validation_windows < 1:
        parser.error("--snapshots and --validation-windows must be >= 1")
    if args.runs < 1 or (args.runs > 1 and args.snapshots < 2):
        parser.error("--runs must be >= 1, and above 1 only with --snapshots")
    if args.snapshots > 1 and (args.trainer != "hdeeprm" or args.policies):
        parser.error("--snapshots needs --trainer hdeeprm (job selector alone)")
    if args.warm_start is not None and (args.trainer != "hdeeprm" or args.policies):
        parser.error("--warm-start needs --trainer hdeeprm (job selector alone)")
    if args.warm_windows < 1:
        parser.error(f"--warm-windows must be >= 1, got {args.warm_windows}")
    if args.policies is not None:
        args.policies = args.policies.split(",")
        if args.trainer != "hdeeprm":
            parser.error("--policies needs --trainer hdeeprm")
    if args.rlscheduler and args.validate:
        parser.error("--validate draws from a held-out split; RLScheduler's protocol has none")
    if args.max_wait is not None:
        if not 0 <= args.max_wait < float("inf"):
            parser.error(f"--max-wait must be non-negative hours, got {args.max_wait}")
        if args.rlscheduler:
            parser.error("--max-wait: RLScheduler's protocol has no starvation guard")
    if args.timesteps is None:
        args.timesteps = 32_768 if args.quick else 400_000
    if args.eval_windows is None:
        args.eval_windows = 4 if args.quick else 10
    traces = args.traces or trace(TRACE).parent
    if not (traces / TRACE).is_file():
        print(f"{traces / TRACE} not found: give --traces", file=sys.stderr)
        return 2
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        sb3_contrib = None
    with tempfile.TemporaryDirectory(prefix="hdeeprm-jobsel-") as tmp:
        folder = Path(tmp)
        options = load_options(
            write_options(folder, traces, args.eval_windows, args.seed, args.rlscheduler)
        )
        t0 = time.perf_counter()
        inputs = prepare_inputs(options, folder / "run")
        print(f"inputs: {len(inputs.workload.jobs)} jobs in {time.perf_counter() - t0:.1f} s")
        if args.rlscheduler:
            print(
                f"RLScheduler's protocol: training sequences of {RLS_TRAIN_WINDOW} jobs from "
                f"jobs {RLS_TRAIN}, {args.eval_windows} test sequences of {WINDOW} jobs from "
                f"jobs {RLS_EVAL}; Q = 128; average bounded slowdown, tau = 10 s"
            )
        else:
            print(
                f"windows of {WINDOW} jobs: train from jobs {TRAIN}, {args.eval_windows} eval "
                f"windows from jobs {EVAL}; Q = 128; average bounded slowdown, tau = 10 s"
            )
        if args.max_wait is not None:
            print(f"starvation guard: a job that has waited {args.max_wait:g} h is protected")
        for mode in args.modes.split(","):
            backfill = mode == "backfill"

            def test_env(max_wait: float | None, backfill: bool = backfill) -> JobSelectionEnv:
                return JobSelectionEnv(
                    inputs=inputs,
                    split="train" if args.rlscheduler else "eval",  # the test windows come next
                    backfill=backfill,
                    queue_slots=SLOTS,
                    policies=args.policies,
                    log_features=args.log_features,
                    rlscheduler=args.rlscheduler,
                    max_wait=max_wait,
                )

            env = test_env(max_wait_seconds(args))
            kind = "eval"
            if args.rlscheduler:
                env.windows = fixed_windows(inputs, options, RLS_EVAL, args.eval_windows, seed=0)
                kind = "RLScheduler test"
            if args.validate:
                env.windows = fixed_windows(inputs, options, TRAIN, args.eval_windows, seed=1)
                kind = "validation"
            print(f"\n== {mode} ({kind} windows start at jobs {env.windows.eval_starts})")
            header = f"{'picker':<15} {'mean bsld':>10}  {'per window':<40}"
            print(f"{header} {'wall s':>7} {'steps/s':>8} {'worst wait h':>12} {'worst bsld':>10}")
            rows = [] if args.no_heuristics else [(n, HeuristicPicker(n), env) for n in BASELINES]
            if rows and args.max_wait is not None:
                bare = test_env(None)
                bare.windows = env.windows
                rows += [(f"{n} (no guard)", HeuristicPicker(n), bare) for n in BASELINES]
            if args.policies is not None:
                # Heuristic pickers act with one step: give them the first policy.
                rows = [(n, lambda e, p=p: (p(e), 0), where) for n, p, where in rows]
            if args.trainer == "hdeeprm":
                validation = None
                if args.snapshots > 1:
                    validation = validation_env(inputs, options, backfill, args)
                agent, snapshots, wall, cpu, steps = train_hdeeprm(
                    inputs, backfill, args, validation
                )
                pick = agent.act
                runs = f" ({args.runs} runs)" if args.runs > 1 else ""
                print(
                    f"(TwoStepPPO{' two-step ' + str(args.policies) if args.policies else ''}: "
                    f"{steps} training steps{runs} in {wall:.1f} s wall, {cpu:.1f} s CPU, "
                    f"{steps / wall:.0f} steps/s)"
                )
                rows.append(("PPO", pick, env))
            elif sb3_contrib is not None:
                model, wall, steps = train(inputs, backfill, args)
                print(
                    f"(MaskablePPO, {args.policy} policy: {steps} training steps in {wall:.1f} s, "
                    f"{steps / wall:.0f} steps/s)"
                )

                def agent(env, model=model):
                    action, _ = model.predict(
                        env.observation(), action_masks=env.action_masks(), deterministic=True
                    )
                    return int(action)

                rows.append(("PPO", agent, env))
            else:
                print("(sb3-contrib not installed: no learned agent)")
            for name, pick, where in rows:
                values, steps, wall, worst_wait, worst_bsld = evaluate(where, pick)
                per = " ".join(f"{v:.1f}" for v in values)
                print(
                    f"{name:<15} {np.mean(values):>10.2f}  {per:<40} {wall:>7.1f} "
                    f"{steps / wall:>8.0f} {worst_wait:>12.1f} {worst_bsld:>10.0f}"
                )
            if args.report_snapshots and args.trainer == "hdeeprm" and args.snapshots > 1:
                report_snapshots(agent, snapshots, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
