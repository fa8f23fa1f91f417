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
the same episodes), appends a row to ``validation_log.csv``, writes ``hdeeprm/val_...``
TensorBoard scalars, and when the validation statistic (below; by default the mean objective)
is strictly better than every earlier one (lower for costs, higher for utilisation) keeps a
copy of the trainer's state and writes it atomically to ``best_model.pt``. Validation draws
no random number of the trainer, so training with and without it gives the same weights bit
for bit.

Which checkpoint is "better" is the validation *statistic* (:data:`STATISTICS`): ``mean``
(the default), ``median`` over the windows, or ``wins``: the number of windows on which the
checkpoint is strictly better than a reference policy (a fixed pair, played once on the same
windows), ties broken by the mean. With windows whose objectives differ tenfold the mean is
decided by the two or three heaviest windows (the KTH-SP2 measurements of docs/learning.md);
the median and the win count weigh every window alike. :func:`selection_key` is the same rule
as a sort key, for choosing among seeds.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdeeprm._atomic import atomic_open, write_text
from hdeeprm.errors import InputError
from hdeeprm.training.evaluate import MINIMIZED, evaluate, fixed_policy, model_policy, window_ids

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
    "wins",
)
#: Validation statistics: what makes one checkpoint better than another.
STATISTICS = ("mean", "median", "wins")
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
    #: Windows on which it is strictly better than the reference (None without one).
    wins: int | None = None


def selection_key(result: ValidationResult, statistic: str, objective: str) -> tuple[float, ...]:
    """Sort key of a validation under ``statistic``: the smaller, the better.

    ``mean`` and ``median`` compare that figure (lower for costs, higher for utilisation);
    ``wins`` compares the win count against the reference, then the mean.
    """
    sign = 1.0 if objective in MINIMIZED else -1.0
    if statistic == "mean":
        return (sign * result.objective,)
    if statistic == "median":
        return (sign * result.median,)
    if statistic == "wins":
        if result.wins is None:
            raise ValueError("the 'wins' statistic needs a reference policy")
        return (-float(result.wins), sign * result.objective)
    raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}")


def count_wins(values: tuple[float, ...], reference: tuple[float, ...], objective: str) -> int:
    """Windows on which ``values`` are strictly better than ``reference`` (same windows)."""
    if len(values) != len(reference):
        raise ValueError(f"{len(values)} window values against {len(reference)} reference values")
    sign = 1.0 if objective in MINIMIZED else -1.0
    return sum(sign * v < sign * r for v, r in zip(values, reference, strict=True))


def beats_reference(
    result: ValidationResult, reference: tuple[float, ...], statistic: str, objective: str
) -> bool:
    """Whether a validated model is ahead of the reference policy under ``statistic``: a
    better mean (``mean``), a better median (``median``), or more windows won than lost
    (``wins``). The deployment rule of a researcher who knows only the validation windows."""
    sign = 1.0 if objective in MINIMIZED else -1.0
    if statistic == "mean":
        return sign * result.objective < sign * (math.fsum(reference) / len(reference))
    if statistic == "median":
        return sign * result.median < sign * statistics.median(reference)
    if statistic == "wins":
        won = count_wins(result.windows, reference, objective)
        lost = count_wins(reference, result.windows, objective)
        return won > lost
    raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}")


class Validator:
    """Plays the greedy policy on a validation environment and keeps the best checkpoint.

    Args:
        env: an hdeeprm environment on the validation windows (``split="val"``), or a factory
            building one; any environment :func:`~hdeeprm.training.evaluate.evaluate` can play.
        run_dir: folder for ``validation_log.csv`` and ``best_model.pt`` (None: memory only).
        statistic: ``mean``, ``median`` or ``wins`` (:func:`selection_key`).
        reference: the policy wins are counted against: an action name of ``env`` (a fixed
            pair, played once here on every window) or its per-window objectives. Required by
            ``wins``; with another statistic the win count is only logged.
    """

    def __init__(
        self,
        env: Any,
        run_dir: str | Path | None = None,
        *,
        statistic: str = "mean",
        reference: str | tuple[float, ...] | None = None,
    ) -> None:
        if statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}")
        if statistic == "wins" and reference is None:
            raise ValueError("the 'wins' statistic needs a reference pair")
        self.env = env() if callable(env) and not hasattr(env, "reset") else env
        self.objective = str(getattr(self.env, "objective", "avg_job_slowdown"))
        self.sign = 1.0 if self.objective in MINIMIZED else -1.0
        self.statistic = statistic
        self.windows = window_ids(self.env)
        self.run_dir = None if run_dir is None else Path(run_dir)
        #: Per-window objectives of the reference policy (None without one).
        self.reference: tuple[float, ...] | None = None
        if isinstance(reference, str):
            names = list(getattr(self.env, "action_names", ()))
            if reference not in names:
                raise InputError(
                    f"{reference!r} is not an action of the validation environment; "
                    f"actions: {', '.join(names)}",
                    None,
                    "params.val_reference",
                )
            played = evaluate(
                self.env,
                {reference: fixed_policy(names.index(reference))},
                seed=VALIDATION_SEED,
                windows=self.windows,
            )
            self.reference = tuple(r.objective for r in played)
        elif reference is not None:
            self.reference = tuple(float(v) for v in reference)
            if len(self.reference) != len(self.windows):
                raise ValueError(
                    f"{len(self.reference)} reference values for {len(self.windows)} "
                    "validation windows"
                )
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
        objs = tuple(r.objective for r in results)
        wins = None if self.reference is None else count_wins(objs, self.reference, self.objective)
        result = ValidationResult(
            trainer.updates,
            trainer.global_step,
            math.fsum(objs) / len(objs),
            statistics.median(objs),
            math.fsum(r.mean_slowdown for r in results) / len(results),
            math.fsum(r.mean_bounded_slowdown for r in results) / len(results),
            objs,
            False,
            wins,
        )
        previous = self.best
        better = previous is None or self.key(result) < self.key(previous)
        result = dataclasses.replace(result, best=better)
        self.history.append(result)
        if better:
            self.best_state = copy.deepcopy(trainer.state(validation=result))
            if self.run_dir is not None:
                self.save_best(self.run_dir / BEST_MODEL_FILE)
        self._write_log()
        if writer is not None:
            step = trainer.global_step
            writer.add_scalar("hdeeprm/val_objective", result.objective, step)
            writer.add_scalar("hdeeprm/val_mean_slowdown", result.mean_slowdown, step)
            writer.add_scalar("hdeeprm/val_best_objective", self.best.objective, step)  # type: ignore[union-attr]
        return result

    def key(self, result: ValidationResult) -> tuple[float, ...]:
        """Sort key of ``result`` under this validator's statistic (smaller: better)."""
        return selection_key(result, self.statistic, self.objective)

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
                    "" if r.wins is None else r.wins,
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
    "STATISTICS",
    "VALIDATION_COLUMNS",
    "VALIDATION_LOG_FILE",
    "ValidationResult",
    "Validator",
    "beats_reference",
    "count_wins",
    "selection_key",
]
