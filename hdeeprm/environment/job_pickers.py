"""Fixed job pickers for :class:`~hdeeprm.environment.job_selection.JobSelectionEnv`.

A heuristic picker ranks the *visible* jobs by one of the orderings of
:mod:`hdeeprm.scheduling.orderings` (FCFS, SPF, WFP3, UNICEP, F1, ...; the predicted run
time is the requested time) and picks the first. It acts in the same environment as a
learned agent, through the same actions, so results compare like for like:

* without backfilling, if the first-ranked job does not fit now the picker **does nothing**
  and waits for it (no job jumps the queue: the heuristic as a plain list scheduler);
* with backfilling, it picks the first-ranked job whatever its size and the environment
  backfills around it (EASY with that ordering over the visible queue).

``SJF`` is accepted as another name of ``SPF`` (shortest requested time first).
"""

from __future__ import annotations

from typing import Any

from hdeeprm.scheduling.orderings import ORDERINGS, sort_key

#: The RLScheduler baselines.
BASELINES = ("FCFS", "SJF", "WFP3", "UNICEP", "F1")
ALIASES = {"SJF": "SPF"}


class _View:
    """What an ordering reads from a queued job (``pred``: the requested time)."""

    __slots__ = ("seq", "subtime", "res", "pred", "slot")

    def __init__(self, record: Any, slot: int) -> None:
        self.seq = record.seq
        self.subtime = record.subtime
        self.res = record.res
        self.pred = record.req_time
        self.slot = slot


class HeuristicPicker:
    """Pick the visible job an ordering ranks first (see the module docstring).

    Args:
        ordering: an ordering name of :mod:`hdeeprm.scheduling.orderings`, or ``SJF``.
    """

    def __init__(self, ordering: str) -> None:
        name = ALIASES.get(ordering.upper(), ordering.upper())
        if name not in ORDERINGS:
            known = ", ".join(sorted(set(ORDERINGS) | set(ALIASES)))
            raise ValueError(f"unknown ordering {ordering!r}; expected one of {known}")
        self.name = ordering
        self.ordering = name

    def rank(self, env: Any) -> list[int]:
        """Slots of the visible jobs, best first."""
        key = sort_key(self.ordering, env.manager.now)
        views = [_View(job, slot) for slot, job in enumerate(env.visible_jobs)]
        return [view.slot for view in sorted(views, key=key)]

    def __call__(self, env: Any) -> int:
        """The action for ``env``'s current state."""
        mask = env.action_masks()
        ranked = self.rank(env)
        if ranked and mask[ranked[0]]:
            return ranked[0]
        if mask[env.do_nothing] or not ranked:
            return int(env.do_nothing)
        # Do nothing is invalid (it could never end): the first ranked job that may start.
        return next(slot for slot in ranked if mask[slot])


def run_episode(env: Any, picker: Any, **reset_options: Any) -> dict[str, float]:
    """Play one episode with ``picker(env) -> action``; return its objective and counts."""
    env.reset(options=reset_options or None)
    total, steps, done = 0.0, 0, env.finished
    while not done:
        _, reward, done, _, info = env.step(picker(env))
        total += reward
        steps += 1
    return {"objective": env.objective_value(), "return": total, "steps": steps}
