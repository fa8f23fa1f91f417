"""Learning a job-scoring rule by policy search: the cross-entropy method (CEM).

The job pickers of :mod:`hdeeprm.environment.job_pickers` rank the visible jobs by a fixed key.
:class:`~hdeeprm.environment.job_pickers.ScorePicker` ranks them by a *linear* score over a few
job features, and this module learns its weights on training windows with CEM (Rubinstein;
as used for Tetris controllers by Szita and Lorincz 2006): sample weight vectors from a
diagonal Gaussian, play each on the same training windows, refit the Gaussian to the best
few (the elite), repeat. It is a black-box policy search on the episode objective itself,
so no reward shaping, critic or gradient is involved, and a policy of five numbers cannot
memorise windows.

Two choices keep it honest and reproducible:

* the current mean is evaluated with every population (elitism), and the result is the best
  weights *evaluated*, so the search never returns anything worse on its training windows
  than where it started (e.g. the weights of ``SQF``, the pair chosen on Gaia);
* every draw comes from one ``numpy`` generator seeded by :attr:`CEMConfig.seed`, and the
  evaluation is deterministic, so the same seed gives the same weights bit for bit.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hdeeprm.environment.job_pickers import run_episode


@dataclass(frozen=True)
class CEMConfig:
    """Cross-entropy method settings.

    Attributes:
        iterations: Gaussian refits.
        population: weight vectors sampled per iteration (the mean is evaluated besides).
        elite: best vectors the Gaussian is refitted to.
        init_std: initial standard deviation of every weight.
        min_std: floor of every standard deviation (keeps exploring).
        seed: seed of the sampling generator.
    """

    iterations: int = 6
    population: int = 10
    elite: int = 3
    init_std: float = 0.5
    min_std: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        if self.iterations < 1 or self.population < 1:
            raise ValueError("iterations and population must be at least 1")
        if not 1 <= self.elite <= self.population + 1:
            raise ValueError(
                f"elite must be between 1 and population + 1 ({self.population + 1}), "
                f"got {self.elite}"
            )
        if not (self.init_std > 0 and self.min_std >= 0):
            raise ValueError("init_std must be positive and min_std non-negative")


@dataclass
class CEMResult:
    """What :func:`cem_search` found.

    Attributes:
        weights: the best weights evaluated (lowest objective).
        value: their objective on the training windows.
        start_value: the starting weights' objective.
        history: one row per iteration: ``iteration``, ``mean_value`` (the mean's objective),
            ``elite_value`` (mean objective of the elite), ``best_value`` (best so far),
            ``std`` (mean standard deviation after the refit).
        evaluations: objective evaluations made.
    """

    weights: np.ndarray
    value: float
    start_value: float
    history: list[dict[str, float]] = field(default_factory=list)
    evaluations: int = 0


def add_cem_arguments(
    parser: argparse.ArgumentParser, *, iterations: int = 6, population: int = 10
) -> None:
    """Add ``--iterations``, ``--population``, ``--elite`` and ``--init-std`` (a search
    script's CEM settings; the seed is the script's ``--seed``)."""
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument("--population", type=int, default=population)
    parser.add_argument("--elite", type=int, default=CEMConfig.elite)
    parser.add_argument("--init-std", type=float, default=CEMConfig.init_std)


def cem_config_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> CEMConfig:
    """The :class:`CEMConfig` of :func:`add_cem_arguments`' options and ``args.seed``; a bad
    value is a usage error naming it (``parser.error``)."""
    try:
        return CEMConfig(
            iterations=args.iterations,
            population=args.population,
            elite=args.elite,
            init_std=args.init_std,
            seed=args.seed,
        )
    except ValueError as exc:
        parser.error(str(exc))
        raise  # parser.error exits; kept for type checkers


def cem_search(
    objective: Callable[[np.ndarray], float],
    start: Sequence[float],
    config: CEMConfig = CEMConfig(),
    log: Callable[[str], Any] | None = None,
) -> CEMResult:
    """Minimise ``objective(weights)`` by CEM from ``start`` (see the module docstring).

    Args:
        objective: the value to minimise (e.g. the mean slowdown over training windows).
        start: the initial mean of the sampling Gaussian.
        config: the method's settings.
        log: called with one line per iteration (e.g. ``print``).
    """
    rng = np.random.default_rng(config.seed)
    mean = np.asarray(start, dtype=np.float64).copy()
    std = np.full_like(mean, config.init_std)
    best_w, best_v = mean.copy(), float(objective(mean))
    start_value, evaluations = best_v, 1
    mean_value = best_v
    history: list[dict[str, float]] = []
    for it in range(config.iterations):
        samples = mean + std * rng.standard_normal((config.population, mean.size))
        candidates = [mean.copy(), *samples]
        values = [mean_value] + [float(objective(w)) for w in samples]
        evaluations += config.population
        order = sorted(range(len(candidates)), key=lambda i: (values[i], i))
        elite = np.array([candidates[i] for i in order[: config.elite]])
        if values[order[0]] < best_v:
            best_w, best_v = candidates[order[0]].copy(), values[order[0]]
        mean = elite.mean(axis=0)
        std = np.maximum(elite.std(axis=0), config.min_std)
        mean_value = float(objective(mean))
        evaluations += 1
        if mean_value < best_v:
            best_w, best_v = mean.copy(), mean_value
        row = {
            "iteration": float(it + 1),
            "mean_value": mean_value,
            "elite_value": float(np.mean([values[i] for i in order[: config.elite]])),
            "best_value": best_v,
            "std": float(std.mean()),
        }
        history.append(row)
        if log is not None:
            log(
                f"CEM iteration {it + 1}/{config.iterations}: elite {row['elite_value']:.4f}, "
                f"new mean {mean_value:.4f}, best {best_v:.4f}, std {row['std']:.3f}, "
                f"mean weights {np.array2string(mean, precision=3)}"
            )
    return CEMResult(best_w, best_v, start_value, history, evaluations)


def windows_objective(
    env: Any, picker: Callable[[Any], int], windows: Sequence[int]
) -> list[float]:
    """Each fixed window's objective (``env.objective_value()``) played with ``picker``."""
    return [run_episode(env, picker, seed=0, window=k)["objective"] for k in windows]
