"""``hdeeprm-launch`` with ``"agent": {"type": "LEARNING", "algorithm": "ppo", ...}``.

The agent block's ``hidden``, ``lr`` and ``gamma`` and the options' ``seed`` become the PPO
config's ``hidden``, ``learning_rate``, ``gamma`` and ``seed``; ``params`` holds every other
hyperparameter of :class:`~hdeeprm.training.ppo.PPOConfig` (unknown keys are errors).

* ``run: "train"``: :meth:`PPOTrainer.learn` for ``params.total_timesteps`` decisions
  (continuing the model of ``-im`` when given), ``training_log.csv`` and ``tensorboard/`` in
  the run folder, the model saved with ``-om``. With ``params.eval_every`` the greedy policy
  is validated on the ``episodes.val_jobs`` windows (the whole workload without an
  ``episodes`` block) and the best checkpoint is kept in ``best_model.pt``.
* ``run: "evaluate"`` (greedy) or ``"test"`` (sampled): the ``-im`` model plays every
  evaluation window once; the table is printed and ``evaluation.csv`` written.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from hdeeprm.errors import InputError
from hdeeprm.inputs import ExperimentInputs
from hdeeprm.training.ppo import PPOConfig, PPOTrainer, inputs_factories

#: Config fields set by the agent block or the options rather than ``params``.
FROM_BLOCK = {"hidden": "hidden", "learning_rate": "lr", "gamma": "gamma", "seed": "seed"}


def ppo_config(inputs: ExperimentInputs) -> PPOConfig:
    """The PPO config an options file asks for (:class:`InputError` naming the bad key)."""
    options = inputs.options
    agent = options.agent
    source = str(options.source) if options.source else None
    for key, block_key in FROM_BLOCK.items():
        if key in agent.params:
            where = "seed" if block_key == "seed" else f"pybatsim.agent.{block_key}"
            raise InputError(
                f"'{key}' is set by '{where}', not in params",
                source,
                f"pybatsim.agent.params.{key}",
            )
    params = dict(agent.params)
    params.update(hidden=agent.hidden, learning_rate=agent.lr, gamma=agent.gamma, seed=options.seed)
    return PPOConfig.from_params(params, "pybatsim.agent.params", source)


@dataclass(slots=True)
class PPORunResult:
    """What a PPO launch did, for the launcher to print."""

    run: str
    steps: int
    updates: int
    episodes: int
    wall_time: float
    run_dir: Path
    model_path: Path | None
    table: str = ""
    #: One line naming the best validation checkpoint (training with ``eval_every``).
    validation: str = ""

    def summary(self) -> str:
        rate = self.steps / self.wall_time if self.wall_time > 0 else 0.0
        lines = []
        if self.run == "train":
            lines.append(
                f"ppo train: {self.steps} decision steps, {self.updates} update(s), "
                f"{self.episodes} episode(s) in {self.wall_time:.2f} s ({rate:,.0f} steps/s)"
            )
            lines.append(f"log: {self.run_dir / 'training_log.csv'}")
        else:
            lines.append(self.table)
            lines.append(f"results: {self.run_dir / 'evaluation.csv'}")
        if self.model_path is not None and self.run == "train":
            lines.append(f"model: {self.model_path}")
        if self.validation:
            lines.append(self.validation)
        return "\n".join(lines)


def run_ppo(
    inputs: ExperimentInputs,
    *,
    in_model: Path | None,
    out_model: Path | None,
    progress: bool = True,
    tensorboard: bool | None = None,
) -> PPORunResult:
    """Train or evaluate the built-in PPO agent as the options say."""
    config = ppo_config(inputs)
    run = inputs.options.agent.run
    run_dir = inputs.output_dir
    if run != "train":
        if in_model is None:
            raise InputError(
                f"run '{run}' plays a trained model: pass it with -im MODEL.pt",
                str(inputs.options.source) if inputs.options.source else None,
                "pybatsim.agent.run",
            )
        return _evaluate(inputs, config, in_model, run == "evaluate")
    # Subprocess environments are forked (AsyncVectorEnv context "fork"), so the prepared
    # inputs reach them without being pickled.
    env_fns = inputs_factories(inputs, config.num_envs, config.split)
    val_env = validation_env(inputs) if config.eval_every else None
    trainer = PPOTrainer(config, env_fns, run_dir=run_dir, tensorboard=tensorboard, val_env=val_env)
    if in_model is not None:
        state = PPOTrainer.read_checkpoint(in_model)
        trainer.load_state(state, str(in_model))
    start_steps = trainer.global_step
    t0 = time.perf_counter()
    try:
        trainer.learn(config.total_timesteps, progress=progress)
    finally:
        trainer.close()
    wall = time.perf_counter() - t0
    if out_model is not None:
        trainer.save(out_model)
    validation = ""
    best = trainer.validator.best if trainer.validator is not None else None
    if best is not None:
        from hdeeprm.training.validation import BEST_MODEL_FILE

        validation = (
            f"best validation: {inputs.options.env.objective} {best.objective:.6g} after update "
            f"{best.update} ({best.steps} steps): {run_dir / BEST_MODEL_FILE}"
        )
    return PPORunResult(
        "train",
        trainer.global_step - start_steps,
        trainer.updates,
        trainer.episodes,
        wall,
        run_dir,
        Path(out_model) if out_model is not None else None,
        validation=validation,
    )


def validation_env(inputs: ExperimentInputs):
    """The environment ``eval_every`` validates on: the ``val_jobs`` windows, or the whole
    workload without an ``episodes`` block (:class:`InputError` when windows exist but no
    ``val_jobs``: validating on training episodes drawn at random would not be repeatable)."""
    from hdeeprm.environment import HeterogeneousClusterEnv

    options = inputs.options
    episodes = options.env.episodes
    if episodes is None:
        return HeterogeneousClusterEnv(inputs=inputs, split="all")
    if episodes.val_jobs is None:
        raise InputError(
            "params.eval_every validates on fixed windows of the training part: add "
            '"val_jobs": [start, end] (and optionally val_windows, val_seed) to the episodes '
            "block",
            str(options.source) if options.source else None,
            "pybatsim.env.episodes.val_jobs",
        )
    return HeterogeneousClusterEnv(inputs=inputs, split="val")


def _evaluate(
    inputs: ExperimentInputs, config: PPOConfig, in_model: Path, greedy: bool
) -> PPORunResult:
    from hdeeprm.environment import HeterogeneousClusterEnv
    from hdeeprm.training.ensemble import load_policy
    from hdeeprm.training.evaluate import evaluate, format_table, model_policy, write_csv

    episodes = inputs.options.env.episodes
    split = "eval" if episodes is not None and episodes.eval_jobs is not None else "all"
    env = HeterogeneousClusterEnv(inputs=inputs, split=split)
    trainer = load_policy(in_model)  # a PPO checkpoint or an ensemble of them
    if trainer.action_names != env.action_names:
        raise InputError(
            f"the model was trained for other actions: {', '.join(trainer.action_names)}",
            str(in_model),
        )
    if trainer.observation_size != env.observation_size:
        raise InputError(
            f"the model expects {trainer.observation_size} observation values, this "
            f"environment gives {env.observation_size}",
            str(in_model),
        )
    name = "model" if greedy else "model (sampled)"
    t0 = time.perf_counter()
    results = evaluate(env, {name: model_policy(trainer, greedy)}, seed=config.seed)
    wall = time.perf_counter() - t0
    write_csv(results, inputs.output_dir / "evaluation.csv")
    table = format_table(results, inputs.options.env.objective)
    return PPORunResult(
        "evaluate" if greedy else "test",
        sum(r.steps for r in results),
        0,
        len(results),
        wall,
        inputs.output_dir,
        None,
        table,
    )


__all__ = ["PPORunResult", "ppo_config", "run_ppo", "validation_env"]
