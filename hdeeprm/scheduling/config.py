"""The scheduler configuration: one heuristic triple plus the queue orderings.

The thesis's *heuristic triple* is (predictor, correction, backfilling variant); chapter 5 adds
the primary and backfilling queue orderings and the starvation threshold ``theta``. Named
presets make the published heuristics one line of options each:

=================  ===========  ===========  ==========  =======  ========
preset             predictor    correction   variant     primary  backfill
=================  ===========  ===========  ==========  =======  ========
easy               requested    requested    easy        FCFS     FCFS
easy-clairvoyant   clairvoyant  requested    easy        FCFS     FCFS
easy-sjbf          requested    requested    easy-sjbf   FCFS     SPF
easy++             ave2         incremental  easy-sjbf   FCFS     SPF
thesis-best        regression   incremental  easy-sjbf   FCFS     SPF
                   (E-Loss)
conservative       requested    requested    conservative FCFS    (none)
=================  ===========  ===========  ==========  =======  ========
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from hdeeprm.errors import InputError
from hdeeprm.scheduling.corrections import CORRECTIONS
from hdeeprm.scheduling.orderings import ORDERINGS, canonical

VARIANTS: tuple[str, ...] = ("easy", "easy-sjbf", "conservative")
#: Which cores a started job may take: ``any`` free cores (the literature's EASY, counting
#: cores; the core policy places the job) or one ``contiguous`` range of core ids
#: (pybatsim's ``easyBackfill``, :mod:`hdeeprm.scheduling.contiguous`).
HOSTS: tuple[str, ...] = ("any", "contiguous")
PREDICTORS: tuple[str, ...] = ("requested", "clairvoyant", "ave2", "regression")
LOSS_BASES: tuple[str, ...] = ("squared", "linear")
WEIGHTS: tuple[str, ...] = ("constant", "short_wide", "long_narrow", "small_area", "large_area")


@dataclass(frozen=True, slots=True)
class LossSpec:
    """The regression's loss (thesis 4.2.4): base for over- and under-prediction, weight.

    ``over`` applies when the prediction is at least the real run time (``f >= p``), ``under``
    otherwise. E-Loss is ``over="squared", under="linear", weight="large_area"``.
    """

    over: str = "squared"
    under: str = "linear"
    weight: str = "large_area"


E_LOSS = LossSpec()


@dataclass(frozen=True, slots=True)
class HeuristicTriple:
    """Predictor, correction and backfilling variant (thesis 4.4.1)."""

    predictor: str = "requested"
    correction: str = "requested"
    variant: str = "easy"
    loss: LossSpec = E_LOSS


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """Everything a backfilling scheduler needs. ``theta`` (seconds, ``None`` = off) moves jobs
    that waited longer ahead of the primary queue, in FCFS order (EASY(P, theta)); ``hosts``
    is :data:`HOSTS`'s choice."""

    triple: HeuristicTriple = HeuristicTriple()
    primary: str = "FCFS"
    backfill: str = "FCFS"
    theta: float | None = None
    hosts: str = "any"

    @property
    def name(self) -> str:
        t = self.triple
        theta = "" if self.theta is None else f", theta={self.theta:g}"
        hosts = "" if self.hosts == "any" else f", {self.hosts} hosts"
        return (
            f"{t.variant}({self.primary}/{self.backfill}{theta}; {t.predictor}, "
            f"{t.correction}{hosts})"
        )


PRESETS: dict[str, SchedulerConfig] = {
    "easy": SchedulerConfig(),
    "easy-clairvoyant": SchedulerConfig(HeuristicTriple("clairvoyant")),
    "easy-sjbf": SchedulerConfig(HeuristicTriple(variant="easy-sjbf"), backfill="SPF"),
    "easy++": SchedulerConfig(HeuristicTriple("ave2", "incremental", "easy-sjbf"), backfill="SPF"),
    "thesis-best": SchedulerConfig(
        HeuristicTriple("regression", "incremental", "easy-sjbf"), backfill="SPF"
    ),
    "conservative": SchedulerConfig(HeuristicTriple(variant="conservative")),
}

SCHEDULER_KEYS = (
    "preset",
    "variant",
    "primary",
    "backfill",
    "predictor",
    "correction",
    "theta",
    "loss",
    "hosts",
)
LOSS_KEYS = ("over", "under", "weight")


def _fail(where: str, message: str, path: str | None) -> InputError:
    return InputError(message, path, where)


def _ordering(value: Any, where: str, path: str | None) -> str:
    """An ordering's canonical name: a fixed one or ``SCORE(a,b,c)``."""
    if isinstance(value, str):
        try:
            return canonical(value)
        except ValueError:
            pass
    raise _fail(
        where,
        f"got {value!r}; allowed values: {', '.join(ORDERINGS)}, or 'SCORE(a,b,c)' with "
        "three numbers (a learned score ordering)",
        path,
    )


def _choice(value: Any, where: str, allowed: tuple[str, ...], path: str | None) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise _fail(where, f"got {value!r}; allowed values: {', '.join(allowed)}", path)
    return value


def parse_scheduler(raw: Any, where: str = "scheduler", path: str | None = None) -> SchedulerConfig:
    """Read the options' ``scheduler`` block: a preset name, or an object whose keys override
    a preset (``"preset"``, default ``"easy"``). Errors name the key and the allowed values."""
    if isinstance(raw, str):
        return PRESETS[_choice(raw, where, tuple(PRESETS), path)]
    if not isinstance(raw, dict):
        raise _fail(where, f"expected a preset name or an object, got {type(raw).__name__}", path)
    for key in raw:
        if key not in SCHEDULER_KEYS:
            raise _fail(
                f"{where}.{key}",
                f"unknown key '{key}'; allowed keys: {', '.join(SCHEDULER_KEYS)}",
                path,
            )
    base = PRESETS[_choice(raw.get("preset", "easy"), f"{where}.preset", tuple(PRESETS), path)]
    triple = base.triple
    if "variant" in raw:
        triple = replace(
            triple, variant=_choice(raw["variant"], f"{where}.variant", VARIANTS, path)
        )
    if "predictor" in raw:
        triple = replace(
            triple, predictor=_choice(raw["predictor"], f"{where}.predictor", PREDICTORS, path)
        )
    if "correction" in raw:
        triple = replace(
            triple,
            correction=_choice(raw["correction"], f"{where}.correction", tuple(CORRECTIONS), path),
        )
    if "loss" in raw:
        lraw = raw["loss"]
        lwhere = f"{where}.loss"
        if not isinstance(lraw, dict):
            raise _fail(
                lwhere,
                "expected an object like "
                '{"over": "squared", "under": "linear", "weight": "large_area"}',
                path,
            )
        for key in lraw:
            if key not in LOSS_KEYS:
                raise _fail(
                    f"{lwhere}.{key}",
                    f"unknown key '{key}'; allowed keys: {', '.join(LOSS_KEYS)}",
                    path,
                )
        loss = LossSpec(
            _choice(lraw.get("over", "squared"), f"{lwhere}.over", LOSS_BASES, path),
            _choice(lraw.get("under", "linear"), f"{lwhere}.under", LOSS_BASES, path),
            _choice(lraw.get("weight", "large_area"), f"{lwhere}.weight", WEIGHTS, path),
        )
        if triple.predictor != "regression":
            raise _fail(lwhere, "a loss only applies to the 'regression' predictor", path)
        triple = replace(triple, loss=loss)
    primary = base.primary
    if "primary" in raw:
        primary = _ordering(raw["primary"], f"{where}.primary", path)
    backfill = base.backfill
    if triple.variant == "easy-sjbf":
        backfill = "SPF"
    if "backfill" in raw:
        backfill = _ordering(raw["backfill"], f"{where}.backfill", path)
        if triple.variant == "easy-sjbf" and backfill != "SPF":
            raise _fail(
                f"{where}.backfill",
                f"easy-sjbf backfills shortest predicted job first (SPF); got {backfill!r} "
                "(use variant 'easy' to choose another backfilling ordering)",
                path,
            )
    theta = base.theta
    if "theta" in raw and raw["theta"] is not None:
        value = raw["theta"]
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and value >= 0
        if not ok or value != value or value == float("inf"):
            raise _fail(f"{where}.theta", f"expected seconds >= 0 or null, got {value!r}", path)
        theta = float(value)
    elif "theta" in raw:
        theta = None
    hosts = base.hosts
    if "hosts" in raw:
        hosts = _choice(raw["hosts"], f"{where}.hosts", HOSTS, path)
        if hosts == "contiguous" and triple.variant == "conservative":
            raise _fail(
                f"{where}.hosts",
                "contiguous hosts are implemented for the EASY variants (easy, easy-sjbf) "
                "only, not for conservative backfilling",
                path,
            )
    return SchedulerConfig(triple, primary, backfill, theta, hosts)
