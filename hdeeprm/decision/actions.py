"""The action space: which (job policy, core policy) pairs an agent may choose from.

An action is applied at a decision point until the chosen job cannot be placed (thesis
3.2.3.2). The optional void action schedules nothing now. Action indices are positions in the
:class:`ActionSpace`, so an agent's output maps to a pair without any lookup table of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hdeeprm.errors import InputError

#: Job selection policies (SPEC section 5), in action-space order.
JOB_POLICIES: tuple[str, ...] = ("random", "first", "shortest", "smallest", "low_mem", "low_mem_bw")
#: Core selection policies (SPEC section 5), in action-space order.
CORE_POLICIES: tuple[str, ...] = (
    "random",
    "high_gflops",
    "high_cores",
    "high_mem",
    "high_mem_bw",
    "low_power",
)
#: Allocation policies by locality (CuSH; :mod:`hdeeprm.decision.gpus`): usable in any pair
#: and by the job-selection environment, but not in the default 36-pair action space.
LOCALITY_POLICIES: tuple[str, ...] = ("depth_first", "breadth_first")
#: Every policy that may place a job: the core policies, then the locality ones.
PLACEMENT_POLICIES: tuple[str, ...] = CORE_POLICIES + LOCALITY_POLICIES
#: Name of the action that schedules nothing at a decision point.
VOID = "void"


@dataclass(frozen=True, slots=True)
class Action:
    """One entry of the action space: a policy pair, or void (both policies ``None``)."""

    job_policy: str | None
    core_policy: str | None

    @property
    def is_void(self) -> bool:
        return self.job_policy is None

    @property
    def name(self) -> str:
        """``"shortest-high_gflops"`` style name, or ``"void"``."""
        return VOID if self.job_policy is None else f"{self.job_policy}-{self.core_policy}"

    def __str__(self) -> str:
        return self.name


VOID_ACTION = Action(None, None)


def parse_action_name(name: str, *, path: str | None = None, where: str | None = None) -> Action:
    """``"shortest-high_gflops"`` -> ``Action("shortest", "high_gflops")``; ``"void"`` too.

    Policy names contain ``_`` but never ``-``, so the first ``-`` splits the pair.
    """
    if name == VOID:
        return VOID_ACTION
    job, sep, core = name.partition("-") if isinstance(name, str) else ("", "", "")
    if not sep or job not in JOB_POLICIES or core not in PLACEMENT_POLICIES:
        raise InputError(
            f"expected 'JOBPOLICY-COREPOLICY' or 'void', got {name!r}; job policies: "
            f"{', '.join(JOB_POLICIES)}; core policies: {', '.join(PLACEMENT_POLICIES)}",
            path,
            where,
        )
    return Action(job, core)


class ActionSpace(Sequence[Action]):
    """An ordered, duplicate-free list of actions; the void action, when enabled, is last.

    Args:
        pairs: (job policy, core policy) pairs in the order wanted; ``None`` means all 36 pairs
            in SPEC order (job policies outer, core policies inner).
        void: whether to append the void action.
    """

    def __init__(self, pairs: Iterable[tuple[str, str]] | None = None, void: bool = True) -> None:
        if pairs is None:
            pairs = [(job, core) for job in JOB_POLICIES for core in CORE_POLICIES]
        actions: list[Action] = []
        for job, core in pairs:
            action = parse_action_name(f"{job}-{core}")
            if action in actions:
                raise InputError(f"duplicate action {action.name!r} in the action space")
            actions.append(action)
        if void:
            actions.append(VOID_ACTION)
        if not actions:
            raise InputError("the action space is empty: select at least one pair or enable void")
        self._actions: tuple[Action, ...] = tuple(actions)
        self._index = {action.name: i for i, action in enumerate(self._actions)}

    @classmethod
    def from_selection(
        cls,
        selection: Sequence[Mapping[str, Sequence[str]]] | None,
        void: bool = True,
        *,
        path: str | None = None,
        where: str = "actions.selection",
    ) -> ActionSpace:
        """Build from the thesis format ``[{"shortest": ["high_gflops", "high_mem"]}, ...]``.

        Order is preserved as written (entries, then keys, then core policies). Errors name
        ``path`` and the JSON path of the bad entry.
        """
        if selection is None:
            return cls(None, void)
        if not isinstance(selection, list):
            raise InputError("expected a list of {job_policy: [core_policy, ...]}", path, where)
        pairs: list[tuple[str, str]] = []
        for i, entry in enumerate(selection):
            here = f"{where}[{i}]"
            if not isinstance(entry, Mapping) or not entry:
                raise InputError(
                    "expected a non-empty {job_policy: [core_policy, ...]}", path, here
                )
            for job, cores in entry.items():
                key_where = f"{here}.{job}"
                if job not in JOB_POLICIES:
                    raise InputError(
                        f"unknown job policy {job!r}; allowed: {', '.join(JOB_POLICIES)}",
                        path,
                        key_where,
                    )
                if not isinstance(cores, list) or not cores:
                    raise InputError("expected a non-empty list of core policies", path, key_where)
                for j, core in enumerate(cores):
                    if core not in PLACEMENT_POLICIES:
                        raise InputError(
                            f"unknown core policy {core!r}; allowed: "
                            f"{', '.join(PLACEMENT_POLICIES)}",
                            path,
                            f"{key_where}[{j}]",
                        )
                    if (job, core) in pairs:
                        raise InputError(
                            f"duplicate action '{job}-{core}'", path, f"{key_where}[{j}]"
                        )
                    pairs.append((job, core))
        return cls(pairs, void)

    def index(self, action: str | Action | tuple[str, str], *args: Any) -> int:
        """Position of an action given by name, :class:`Action` or (job, core) pair."""
        if isinstance(action, tuple) and not isinstance(action, Action):
            action = f"{action[0]}-{action[1]}"
        name = action.name if isinstance(action, Action) else action
        try:
            return self._index[name]
        except KeyError:
            raise InputError(
                f"action {name!r} is not in the action space; available: {', '.join(self.names)}"
            ) from None

    def __contains__(self, action: object) -> bool:
        name = action.name if isinstance(action, Action) else action
        return name in self._index

    @property
    def names(self) -> list[str]:
        return [action.name for action in self._actions]

    @property
    def has_void(self) -> bool:
        return bool(self._actions) and self._actions[-1].is_void

    def __getitem__(self, i: int) -> Action:  # type: ignore[override]  # no slices
        return self._actions[i]

    def __len__(self) -> int:
        return len(self._actions)

    def __iter__(self) -> Iterator[Action]:
        return iter(self._actions)

    def __repr__(self) -> str:
        return f"ActionSpace({self.names})"
