"""Training and evaluation runs of learning agents (``hdeeprm-launch`` with a LEARNING agent).

One episode is one full simulation. With ``run == "train"`` the agent is updated once at the
end of every episode; with ``"test"`` it only acts (no gradients), sampling its actions; with
``"evaluate"`` it acts greedily (its most probable action). Everything a run writes is
written atomically: the model checkpoint (``-om``), ``training_log.csv`` (one row per episode)
and the Batsim outputs of the last episode.
"""

from __future__ import annotations

import csv
import io
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from hdeeprm._atomic import atomic_open, deferred_interrupts, write_text
from hdeeprm.agents.learning import LearningAgent, source_file
from hdeeprm.agents.loader import build_agent
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.errors import InputError, Interrupted
from hdeeprm.inputs import ExperimentInputs
from hdeeprm.training.onpolicy import shape_mismatch

#: Name of the per-episode log in the run folder.
LOG_FILE = "training_log.csv"
#: Fixed leading columns of the log; ``prob_<action>`` columns follow.
LOG_COLUMNS = ("episode", "loss", "total_reward", "objective", "steps")
#: Format version of model checkpoints.
CHECKPOINT_VERSION = 1


@dataclass(slots=True)
class EpisodeLog:
    """What one episode produced."""

    episode: int
    loss: float
    total_reward: float
    objective: float
    steps: int
    probabilities: list[float]

    def row(self) -> list[Any]:
        return [
            self.episode,
            repr(self.loss),
            repr(self.total_reward),
            repr(self.objective),
            self.steps,
            *(repr(p) for p in self.probabilities),
        ]


@dataclass(slots=True)
class TrainingResult:
    """The outcome of :func:`run_learning`."""

    run: str
    objective: str
    action_names: list[str]
    episodes: list[EpisodeLog]
    run_dir: Path
    log_path: Path
    model_path: Path | None
    wall_time: float
    first_episode: int = 0
    outputs: dict[str, Path] = field(default_factory=dict)

    @property
    def total_steps(self) -> int:
        return sum(e.steps for e in self.episodes)

    def summary(self) -> str:
        """A few lines for the launcher to print."""
        n = len(self.episodes)
        lines = [
            f"{self.run}: {n} episode(s) ({self.first_episode}..{self.first_episode + n - 1}), "
            f"{self.total_steps} decision step(s) in {self.wall_time:.2f} s"
            + (f" ({n / self.wall_time:.2f} episodes/s)" if self.wall_time > 0 and n else "")
        ]
        if self.episodes:
            last = self.episodes[-1]
            lines.append(
                f"last episode: total reward {last.total_reward:.6g}, {self.objective} "
                f"{last.objective:.6g}, loss {last.loss:.6g}, {last.steps} step(s)"
            )
            if last.probabilities:
                best = int(np.argmax(last.probabilities))
                lines.append(
                    f"preferred action: {self.action_names[best]} "
                    f"(mean probability {last.probabilities[best]:.3f})"
                )
        lines.append(f"log: {self.log_path}")
        if self.model_path is not None:
            lines.append(f"model: {self.model_path}")
        return "\n".join(lines)


# --- checkpoints --------------------------------------------------------------------------
def save_checkpoint(
    path: str | os.PathLike[str],
    agent: LearningAgent,
    optimizer: torch.optim.Optimizer | None,
    *,
    episodes: int,
    action_names: list[str],
    observation_size: int,
) -> None:
    """Save model and optimiser state atomically (temporary file + ``os.replace``)."""
    target = Path(path)
    state = {
        "version": CHECKPOINT_VERSION,
        "agent_class": type(agent).__name__,
        "episodes": int(episodes),
        "action_names": list(action_names),
        "observation_size": int(observation_size),
        "model": agent.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
    }
    with atomic_open(target, "wb") as handle:
        torch.save(state, handle)


def load_checkpoint(
    path: str | os.PathLike[str],
    agent: LearningAgent,
    optimizer: torch.optim.Optimizer | None,
    *,
    action_names: list[str],
    observation_size: int,
) -> int:
    """Restore model (and optimiser) state saved by :func:`save_checkpoint`.

    Returns the number of episodes the model was trained for. A file that is not such a
    checkpoint, or one made for another agent, action space or observation, raises
    :class:`InputError` naming the file and the mismatch.
    """
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise InputError("model file not found", path) from None
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for corrupt files
        raise InputError(
            f"not a readable hdeeprm model file ({type(exc).__name__}: {exc})", path
        ) from None
    if not isinstance(state, dict) or "model" not in state or "version" not in state:
        raise InputError("not an hdeeprm model file (expected a checkpoint saved with -om)", path)
    if state["version"] != CHECKPOINT_VERSION:
        raise InputError(
            f"checkpoint version {state['version']} is not supported "
            f"(expected {CHECKPOINT_VERSION})",
            path,
            "version",
        )
    if list(state.get("action_names", [])) != list(action_names):
        raise InputError(
            f"the model was trained with actions {state.get('action_names')} but the options "
            f"enable {list(action_names)}",
            path,
            "action_names",
        )
    if state.get("observation_size") != observation_size:
        raise InputError(
            f"the model was trained on observations of size {state.get('observation_size')} "
            f"but this environment gives {observation_size} (different observation type or "
            "platform)",
            path,
            "observation_size",
        )
    if state.get("agent_class") != type(agent).__name__:
        raise InputError(
            f"the model was saved from agent class {state.get('agent_class')!r}, not "
            f"{type(agent).__name__!r}",
            path,
            "agent_class",
        )
    mismatch = shape_mismatch(state["model"], agent.state_dict())
    if mismatch is not None:
        raise InputError(mismatch, path, "model")
    try:
        agent.load_state_dict(state["model"])
    except RuntimeError as exc:
        raise InputError(f"the model does not fit this agent: {exc}", path, "model") from None
    if optimizer is not None and state.get("optimizer") is not None:
        try:
            optimizer.load_state_dict(state["optimizer"])
        except (ValueError, KeyError) as exc:
            raise InputError(
                f"the optimiser state does not fit: {exc}", path, "optimizer"
            ) from None
    return int(state.get("episodes", 0))


# --- logs ---------------------------------------------------------------------------------
def log_header(action_names: list[str]) -> list[str]:
    return [*LOG_COLUMNS, *(f"prob_{name}" for name in action_names)]


def _read_log(path: Path, header: list[str]) -> list[list[str]]:
    """Rows of an existing log with the same columns (else none: a fresh log starts)."""
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows or rows[0] != header:
        return []
    return rows[1:]


def _write_log(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    write_text(path, buffer.getvalue())


def _tensorboard(run_dir: Path, enabled: bool | None) -> Any:
    if enabled is False:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except Exception as exc:  # noqa: BLE001 - tensorboard absent or broken: optional feature
        if enabled:
            raise InputError(
                "TensorBoard logging asked for but tensorboard is not installed"
            ) from exc
        return None
    return SummaryWriter(log_dir=str(run_dir / "tensorboard"))


def episode_seed(base_seed: int, episode: int) -> int:
    """Seed of episode ``episode`` (simulation and action sampling), derived from the options'
    seed so that any episode can be replayed alone."""
    return int(np.random.SeedSequence([int(base_seed), int(episode)]).generate_state(1)[0])


# --- the run ------------------------------------------------------------------------------
def run_episode(
    env: HeterogeneousClusterEnv,
    agent: LearningAgent,
    *,
    seed: int,
    trace: bool = False,
) -> tuple[float, int]:
    """Play one episode with the thesis verbs; return (total reward, steps).

    The agent's episode buffers are reset first; rewards, log-probabilities and values stay
    in the agent for :meth:`~hdeeprm.agents.LearningAgent.loss`.
    """
    agent.reset_episode()
    agent.seed(seed)
    env.reset(seed=seed, options={"trace": trace})
    total = 0.0
    steps = 0
    decided = len(getattr(agent, "probabilities", ()))
    while not env.finished:
        observation = agent.observe(env)
        action = agent.decide(observation)
        check_decision(agent, action, env.action_size, decided)
        decided += 1
        agent.alter(action, env)
        total += agent.rewarded(env)
        steps += 1
    return total, steps


def check_decision(agent: LearningAgent, action: Any, action_size: int, decided: int) -> None:
    """Stop at the first decision whose output does not fit the action space.

    ``decided`` is how many probability vectors the agent had recorded before this decision:
    when it recorded one more, that vector must hold exactly ``action_size`` probabilities.
    Raises :class:`InputError` naming the agent's file and class, the expected and the actual
    shape (instead of sampling from a wrong distribution and logging malformed rows).
    """
    name = type(agent).__name__
    probabilities = getattr(agent, "probabilities", None)
    if probabilities is not None and len(probabilities) > decided:
        shape = tuple(np.shape(probabilities[-1]))
        raw = getattr(agent, "policy_shape", None) or shape
        if shape != (action_size,):
            raise InputError(
                f"{name}.forward_policy returned probabilities of shape {raw} "
                f"({int(np.prod(shape))} values) but the action space has {action_size} "
                f"actions: expected shape (1, {action_size}); size the last layer with the "
                "action_size constructor argument",
                source_file(type(agent)),
                f"class {name}",
            )
    valid = isinstance(action, (int, np.integer)) and not isinstance(action, bool)
    if not valid or not 0 <= int(action) < action_size:
        raise InputError(
            f"{name}.decide returned {action!r}: expected an action index in 0..{action_size - 1}",
            source_file(type(agent)),
            f"class {name}",
        )


def _save_interrupted(
    out_model: Path | None,
    agent: LearningAgent,
    optimizer: torch.optim.Optimizer | None,
    first: int,
    episodes: list[EpisodeLog],
    env: HeterogeneousClusterEnv,
    log_path: Path,
) -> str:
    """After Ctrl-C: save the model as of the last finished episode; say what was kept."""
    done = len(episodes)
    parts = [f"interrupted after {done} finished episode(s) of this run"]
    if done:
        parts.append(f"{log_path} has one row per finished episode")
    if out_model is None:
        parts.append("no model saved (no -om)")
    elif not done:
        parts.append(f"{out_model} not written: no episode finished")
    else:
        with deferred_interrupts():
            save_checkpoint(
                out_model,
                agent,
                optimizer,
                episodes=first + done,
                action_names=env.action_names,
                observation_size=env.observation_size,
            )
        parts.append(
            f"model and optimiser as of episode {first + done - 1} saved to {out_model} "
            f"(continue with -im {out_model})"
        )
    return "; ".join(parts)


def run_learning(
    inputs: ExperimentInputs,
    *,
    agent_file: Path | None,
    in_model: Path | None,
    out_model: Path | None,
    nb_runs: int,
    progress: bool = True,
    tensorboard: bool | None = None,
    write_outputs: bool = True,
    on_episode: Callable[[EpisodeLog], None] | None = None,
) -> TrainingResult:
    """Train (or test) the agent of ``agent_file`` for ``nb_runs`` episodes.

    Args:
        inputs: prepared experiment inputs (options, platform, workload, job limits).
        agent_file: Python file defining the agent (``-a``).
        in_model: checkpoint to start from (``-im``); its episode count continues, and so does
            ``training_log.csv`` when its columns match.
        out_model: where to save the checkpoint after the run (``-om``).
        nb_runs: number of episodes (``-nr``).
        progress: show a progress bar over episodes.
        tensorboard: write TensorBoard scalars (``None``: when tensorboard is importable).
        write_outputs: write the Batsim outputs of the last episode in the run folder.
        on_episode: called with each episode's log (tests, notebooks).
    """
    options = inputs.options
    agent_opts = options.agent
    if agent_file is None:
        raise InputError(
            "a LEARNING agent needs its Python file: pass -a AGENT.py (templates in "
            "agent_examples/)",
            str(options.source) if options.source else None,
            "pybatsim.agent.type",
        )
    if nb_runs < 1:
        raise InputError(f"the number of runs must be at least 1, got {nb_runs}")
    training = agent_opts.run == "train"
    env = HeterogeneousClusterEnv(inputs=inputs)
    # Initial weights come from torch's global generator: seed it for the construction only,
    # leaving the caller's random state as it was.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(options.seed)
        agent = build_agent(
            agent_file,
            agent_opts,
            observation_size=env.observation_size,
            action_size=env.action_size,
        )
    optimizer = agent.configure_optimizer(agent_opts.lr) if training else None
    first = 0
    if in_model is not None:
        first = load_checkpoint(
            in_model,
            agent,
            optimizer,
            action_names=env.action_names,
            observation_size=env.observation_size,
        )
    agent.train(training)
    if agent_opts.run == "evaluate":  # greedy decisions (PolicyLearningAgent.deterministic)
        agent.deterministic = True
    run_dir = inputs.output_dir
    log_path = run_dir / LOG_FILE
    header = log_header(env.action_names)
    rows: list[list[Any]] = _read_log(log_path, header) if in_model is not None else []
    writer = _tensorboard(run_dir, tensorboard)
    episodes: list[EpisodeLog] = []
    start = time.perf_counter()
    last_write = start
    bar = tqdm(total=nb_runs, disable=not progress, unit="episode", desc=agent_opts.run)
    interrupted = False
    try:
        for k in range(nb_runs):
            index = first + k
            seed = episode_seed(options.seed, index)
            last = k == nb_runs - 1
            with torch.set_grad_enabled(training):
                total, steps = run_episode(env, agent, seed=seed, trace=last and write_outputs)
                # Ctrl-C waits until the update and the episode's log row are done, so the
                # model, the optimiser and the log always agree on the last finished episode.
                with deferred_interrupts():
                    loss = agent.loss()
                    if optimizer is not None and loss.requires_grad:  # None unless training
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    probs = agent.action_probabilities()
                    entry = EpisodeLog(
                        index,
                        float(loss.detach()),
                        float(total),
                        float(env.objective_value()),
                        steps,
                        [float(p) for p in probs] if len(probs) else [0.0] * env.action_size,
                    )
                    episodes.append(entry)
                    rows.append(entry.row())
            if writer is not None:
                writer.add_scalar("loss", entry.loss, index)
                writer.add_scalar("total_reward", entry.total_reward, index)
                writer.add_scalar("objective", entry.objective, index)
                for name, p in zip(env.action_names, entry.probabilities):
                    writer.add_scalar(f"probability/{name}", p, index)
            now = time.perf_counter()
            if last or now - last_write > 2.0:
                _write_log(log_path, header, rows)
                last_write = now
            if on_episode is not None:
                on_episode(entry)
            bar.set_postfix(reward=f"{entry.total_reward:.4g}", refresh=False)
            bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
        if writer is not None:
            writer.close()
        if len(rows) and episodes:
            with deferred_interrupts():
                _write_log(log_path, header, rows)
    if interrupted:
        raise Interrupted(
            _save_interrupted(out_model, agent, optimizer, first, episodes, env, log_path)
        )
    outputs = env.write_outputs(run_dir) if write_outputs else {}
    if out_model is not None:
        save_checkpoint(
            out_model,
            agent,
            optimizer,
            episodes=first + nb_runs,
            action_names=env.action_names,
            observation_size=env.observation_size,
        )
    return TrainingResult(
        run=agent_opts.run,
        objective=options.env.objective,
        action_names=env.action_names,
        episodes=episodes,
        run_dir=run_dir,
        log_path=log_path,
        model_path=Path(out_model) if out_model is not None else None,
        wall_time=time.perf_counter() - start,
        first_episode=first,
        outputs=outputs,
    )
