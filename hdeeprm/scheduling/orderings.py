"""Queue orderings of the EASY-style schedulers (thesis 5.2.1 and 6.2.1, RLScheduler's F1-F4).

An ordering maps a queued job to a sort key; **the lowest key goes first** and ties go to the
earlier submission (the submission counter, so orders are deterministic). ``p`` is the job's
*predicted* run time (equal to the requested time with the ``requested`` predictor, as in
chapter 5, where ``p~`` is the user estimate), ``q`` its requested cores, ``s`` its submission
time and ``w = now - s`` its waiting time so far.

=========  ============================================  =======================================
name       key (lowest first)                            meaning
=========  ============================================  =======================================
FCFS       ``s``                                         first come, first served
LCFS       ``-s``                                        last come, first served
SPF        ``p``                                         smallest predicted processing time
LPF        ``-p``                                        longest predicted processing time
SQF        ``q``                                         smallest resource request
LQF        ``-q``                                        largest resource request
LEXP       ``-(w + p) / p``                              largest expansion factor
SEXP       ``(w + p) / p``                               smallest expansion factor
LRF        ``-p / q``                                    largest ratio
SRF        ``p / q``                                     smallest ratio
LAF        ``-p q``                                      largest area
SAF        ``p q``                                       smallest area
WFP3       ``-(w / p)^3 q``                              Tang et al.'s WFP3 (largest score first)
UNICEP     ``-w / (log2(max(q, 2)) p)``                  Tang et al.'s UNICEP (largest first)
F1         ``log10(p) q + 870 log10(s)``                 Carastan-Santos & de Camargo's F1
F2         ``sqrt(p) q + 25600 log10(s)``                F2
F3         ``p q + 6860000 log10(s)``                    F3
F4         ``p sqrt(q) + 530000 log10(s)``               F4
=========  ============================================  =======================================

Guards (documented, since the published formulas divide by or take logs of these): ``p`` is at
least 1e-9 s in divisions; in F1-F4, ``p`` and ``s`` below 0.1 count as 0.1 (RLScheduler's
guard, submission times start at 0 after conversion); UNICEP's ``log2(q)`` uses ``max(q, 2)``
because a one-core job would otherwise divide by zero.

*Static* orderings (all but LEXP, SEXP, WFP3 and UNICEP) never change while a job waits, so the
schedulers keep them in sorted lists fed at each submission; *dynamic* ones depend on ``now``
and are re-sorted at each decision point that needs them.

**Score orderings**, ``SCORE(a,b,c)``: the key ``a log2(max(p, 1)) + b log2(q) + c s / 3600``
(``s`` in hours), a linear score whose weights can be learned
(``studies/easy_ordering/``). It is static, yet it ages jobs: at any time
``now``, ``c s / 3600 = c now / 3600 - c w / 3600`` and the first term is the same for every
queued job, so a positive ``c`` lowers a job's key by ``c`` per hour it has waited, relative to
the others, with no re-sort per decision. Fixed orderings are special cases: ``SCORE(0,0,1)``
is FCFS, ``SCORE(1,0,0)`` SPF and ``SCORE(0,1,0)`` SQF (the same order, ties included, for
times in whole seconds and run times of at least 1 s, as traces give them); ``SCORE(1,1,0)``
is SAF and ``SCORE(1,-1,0)`` SRF except between jobs of equal area (ratio), which the
rounding of the logarithms may put either way.
:func:`score_name` writes the canonical name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Protocol


class Orderable(Protocol):
    """What an ordering reads from a queued job."""

    seq: int
    subtime: float
    res: int
    pred: float


_EPS = 1e-9


def _log10(value: float) -> float:
    return math.log10(value if value > 0.1 else 0.1)


#: Keys that do not depend on time: ``key(job)``.
STATIC: dict[str, Callable[[Orderable], float]] = {
    "FCFS": lambda j: j.subtime,
    "LCFS": lambda j: -j.subtime,
    "SPF": lambda j: j.pred,
    "LPF": lambda j: -j.pred,
    "SQF": lambda j: j.res,
    "LQF": lambda j: -j.res,
    "LRF": lambda j: -j.pred / j.res,
    "SRF": lambda j: j.pred / j.res,
    "LAF": lambda j: -j.pred * j.res,
    "SAF": lambda j: j.pred * j.res,
    "F1": lambda j: _log10(j.pred) * j.res + 870.0 * _log10(j.subtime),
    "F2": lambda j: math.sqrt(max(j.pred, 0.1)) * j.res + 25600.0 * _log10(j.subtime),
    "F3": lambda j: max(j.pred, 0.1) * j.res + 6860000.0 * _log10(j.subtime),
    "F4": lambda j: max(j.pred, 0.1) * math.sqrt(j.res) + 530000.0 * _log10(j.subtime),
}


def _expansion(j: Orderable, now: float) -> float:
    p = max(j.pred, _EPS)
    return (now - j.subtime + p) / p


#: Keys that depend on the decision time: ``key(job, now)``.
DYNAMIC: dict[str, Callable[[Orderable, float], float]] = {
    "LEXP": lambda j, now: -_expansion(j, now),
    "SEXP": _expansion,
    "WFP3": lambda j, now: -(((now - j.subtime) / max(j.pred, _EPS)) ** 3) * j.res,
    "UNICEP": lambda j, now: -(now - j.subtime) / (math.log2(max(j.res, 2)) * max(j.pred, _EPS)),
}

#: Every ordering name, in the thesis's order then the literature's additions.
ORDERINGS: tuple[str, ...] = (
    "FCFS",
    "LCFS",
    "SPF",
    "LPF",
    "SQF",
    "LQF",
    "LEXP",
    "SEXP",
    "LRF",
    "SRF",
    "LAF",
    "SAF",
    "WFP3",
    "UNICEP",
    "F1",
    "F2",
    "F3",
    "F4",
)


#: What a score ordering's weights multiply, in order.
SCORE_FEATURES: tuple[str, ...] = ("log2 predicted run time", "log2 cores", "submission (h)")

_SCORE = re.compile(r"SCORE\(([^,()]+),([^,()]+),([^,()]+)\)")
#: Keys of the score orderings met so far, by canonical name.
_SCORE_KEYS: dict[str, Callable[[Orderable], float]] = {}


def score_name(weights: Sequence[float]) -> str:
    """The canonical name of the score ordering with ``weights`` (three finite numbers; each
    written as Python's shortest exact ``repr``, so the name gives back the same floats)."""
    values = [float(w) for w in weights]
    if len(values) != len(SCORE_FEATURES) or not all(math.isfinite(w) for w in values):
        raise ValueError(
            f"a score ordering needs {len(SCORE_FEATURES)} finite weights "
            f"({', '.join(SCORE_FEATURES)}), got {list(weights)!r}"
        )
    return "SCORE(" + ",".join(repr(w) for w in values) + ")"


def _score_key(weights: Sequence[float]) -> Callable[[Orderable], float]:
    a, b, c = (float(w) for w in weights)
    log2 = math.log2
    # Same arithmetic for every job, in one order: the keys are reproducible bit for bit.
    return lambda j: (
        a * log2(j.pred if j.pred > 1.0 else 1.0) + b * log2(j.res) + c * (j.subtime / 3600.0)
    )


def canonical(name: str) -> str:
    """``name`` as the schedulers keep it: a fixed ordering's name unchanged, a score ordering
    (spaces allowed, any float syntax) as :func:`score_name` writes it. Raises ``ValueError``
    naming what was expected."""
    if name in STATIC or name in DYNAMIC:
        return name
    match = _SCORE.fullmatch(name.replace(" ", "")) if isinstance(name, str) else None
    if match is None:
        raise ValueError(
            f"unknown ordering {name!r}; expected one of {', '.join(ORDERINGS)}, or "
            "'SCORE(a,b,c)' with three numbers (weights of "
            f"{', '.join(SCORE_FEATURES)})"
        )
    try:
        weights = [float(x) for x in match.groups()]
    except ValueError:
        raise ValueError(f"ordering {name!r}: the weights must be numbers") from None
    full = score_name(weights)
    if full not in _SCORE_KEYS:
        _SCORE_KEYS[full] = _score_key(weights)
    return full


def is_ordering(name: str) -> bool:
    """Whether ``name`` is a fixed ordering or a well-formed score ordering."""
    try:
        canonical(name)
    except ValueError:
        return False
    return True


def is_dynamic(name: str) -> bool:
    """Whether the ordering's key changes with time (needs a re-sort per decision)."""
    return name in DYNAMIC


def static_key(name: str) -> Callable[[Orderable], float]:
    """The key of a static ordering (a fixed one or a score ordering, canonical or not)."""
    key = STATIC.get(name) or _SCORE_KEYS.get(name)
    if key is None:
        if is_dynamic(name):
            raise ValueError(f"ordering {name!r} depends on time (not static)")
        key = _SCORE_KEYS[canonical(name)]
    return key


def sort_key(name: str, now: float) -> Callable[[Orderable], tuple[float, int]]:
    """A ``sorted`` key for ordering ``name`` at time ``now`` (ties by submission order)."""
    if name in DYNAMIC:
        dyn = DYNAMIC[name]
        return lambda j: (dyn(j, now), j.seq)
    key = static_key(name)
    return lambda j: (key(j), j.seq)
