"""Validation during PPO training: greedy play on fixed windows of the training part, the best
checkpoint kept (like Stable-Baselines3's ``EvalCallback`` with ``best_model_save_path``).

A trained agent's final weights are not necessarily its best: PPO's greedy policy moves from
update to update, and seeds end far apart on held-out data (docs/learning.md). Choosing, during
training, the checkpoint with the best objective on *validation* windows (fixed windows of
``episodes.val_jobs``, a range of the training part) gives a principled model to deploy and
to compare across seeds, without ever looking at the held-out ``eval_jobs``.

Every ``eval_every`` updates (and after the last one) :class:`Validator` plays the current
greedy policy on every validation window (:func:`hdeeprm.training.evaluate.evaluate`; the
windows and their random-policy seeds depend on ``val_seed`` alone, so every validation sees
the same episodes), appends a row to ``validation_log.csv``, writes ``val/...`` TensorBoard
scalars, and when the mean objective is strictly better than every earlier one (lower for
costs, higher for utilisation) keeps a copy of the trainer's state and writes it atomically
to ``best_model.pt``. Validation draws no random number of the trainer, so training with and
without it gives the same weights bit for bit.
"""

from __future__ import annotations

import copy
import csv
import io
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdeeprm._atomic import atomic_open, write_text
from hdeeprm.training.evaluate import MINIMIZED, evaluate, model_policy, window_ids

#: Files written in the run folder.
VALIDATION_LOG_FILE = "validation_log.csv"
BEST_MODEL_FILE = "best_model.pt"
#: Leading columns of ``validation_log.csv``; ``w<k>`` (objective of window ``k``) follow.
VALIDATION_COLUMNS = (
    "update",
    "steps",
    "objective",
    "median",
    "mean_slowdown",
    "mean_bounded_slowdown",
    "best",
)
#: Reset seed of validation episodes (fixed windows ignore it; the whole-workload split uses it).
VALIDATION_SEED = 0


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """One validation: the greedy policy after ``update`` updates on every window."""

    update: int
    steps: int
    objective: float
    median: float
    mean_slowdown: float
    mean_bounded_slowdown: float
    windows: tuple[float, ...]
    best: bool


class Validator:
    """Plays the greedy policy on a validation environment and keeps the best checkpoint.

    Args:
        env: an hdeeprm environment on the validation windows (``split="val"``), or a factory
            building one; any environment :func:`~hdeeprm.training.evaluate.evaluate` can play.
        run_dir: folder for ``validation_log.csv`` and ``best_model.pt`` (None: memory only).
    """

    def __init__(self, env: Any, run_dir: str | Path | None = None) -> None:
        self.env = env() if callable(env) and not hasattr(env, "reset") else env
        self.objective = str(getattr(self.env, "objective", "avg_job_slowdown"))
        self.sign = 1.0 if self.objective in MINIMIZED else -1.0
        self.windows = window_ids(self.env)
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.history: list[ValidationResult] = []
        #: State (:meth:`PPOTrainer.state`) of the best checkpoint so far, deep-copied.
        self.best_state: dict[str, Any] | None = None

    @property
    def best(self) -> ValidationResult | None:
        """The best validation so far (None before the first)."""
        marked = [r for r in self.history if r.best]
        return marked[-1] if marked else None

    def validate(self, trainer: Any, writer: Any = None) -> ValidationResult:
        """Validate ``trainer``'s greedy policy now; keep and save it if it is the best."""
        results = evaluate(
            self.env,
            {"model": model_policy(trainer, True)},
            seed=VALIDATION_SEED,
            windows=self.windows,
        )
        objs = [r.objective for r in results]
        mean = math.fsum(objs) / len(objs)
        previous = self.best
        better = previous is None or self.sign * mean < self.sign * previous.objective
        result = ValidationResult(
            trainer.updates,
            trainer.global_step,
            mean,
            statistics.median(objs),
            math.fsum(r.mean_slowdown for r in results) / len(results),
            math.fsum(r.mean_bounded_slowdown for r in results) / len(results),
            tuple(objs),
            better,
        )
        self.history.append(result)
        if better:
            self.best_state = copy.deepcopy(trainer.state(validation=result))
            if self.run_dir is not None:
                self.save_best(self.run_dir / BEST_MODEL_FILE)
        self._write_log()
        if writer is not None:
            step = trainer.global_step
            writer.add_scalar("val/objective", mean, step)
            writer.add_scalar("val/mean_slowdown", result.mean_slowdown, step)
            writer.add_scalar("val/best_objective", self.best.objective, step)  # type: ignore[union-attr]
        return result

    def save_best(self, path: str | Path) -> Path:
        """Write the best checkpoint atomically (``torch.save`` of state dicts)."""
        import torch

        if self.best_state is None:
            raise RuntimeError("no validation has run yet: there is no best checkpoint")
        target = Path(path)
        with atomic_open(target, "wb") as handle:
            torch.save(self.best_state, handle)
        return target

    def _write_log(self) -> None:
        if self.run_dir is None:
            return
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        count = max(len(r.windows) for r in self.history)
        writer.writerow([*VALIDATION_COLUMNS, *(f"w{k}" for k in range(count))])
        for r in self.history:
            writer.writerow(
                [
                    r.update,
                    r.steps,
                    repr(r.objective),
                    repr(r.median),
                    repr(r.mean_slowdown),
                    repr(r.mean_bounded_slowdown),
                    int(r.best),
                    *(repr(v) for v in r.windows),
                ]
            )
        write_text(self.run_dir / VALIDATION_LOG_FILE, buffer.getvalue())

    def close(self) -> None:
        close: Callable[[], Any] | None = getattr(self.env, "close", None)
        if close is not None:
            close()


__all__ = [
    "BEST_MODEL_FILE",
    "VALIDATION_COLUMNS",
    "VALIDATION_LOG_FILE",
    "ValidationResult",
    "Validator",
]
