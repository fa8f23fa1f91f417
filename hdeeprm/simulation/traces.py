"""The engine's output time series, kept as flat lists of numbers instead of lists of tuples.

A whole trace records millions of rows (Gaia with hdeeprm's workload manager: about 19 per
job, energy, P-state and machine-state rows together). As tuples in lists, every row is a
container the cyclic garbage collector tracks: each one counts towards the next young
collection and is scanned at least once, and a P-state row, which holds its host-id tuple,
is never untracked and is scanned again by the middle generation. The records below keep
the same numbers one after the other in one flat list per series (floats, ints and strings
are not tracked, so a row costs the collector nothing; a flat list also takes less memory
than the tuples) and read, index, iterate and compare as the lists of tuples they replace,
so the writers of ``out_*.csv`` and any other reader see the same rows. (``array`` columns
were measured too: their ``extend`` converts each number through ``PyArg_Parse`` and cost
more instructions than the collections they saved.)

The engine appends with one ``list.extend`` per event (several rows at once where an event
makes several); nothing else should write to them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: Energy row kinds: job start, job end, P-state change.
KIND_START = "s"
KIND_END = "e"
KIND_PSTATE = "p"


class _Rows:
    """Rows of a fixed width packed in one flat list (``values``, row after row)."""

    __slots__ = ("values",)
    width = 1

    def __init__(self) -> None:
        self.values: list[Any] = []

    def _row(self, at: int) -> tuple[Any, ...]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.values) // self.width

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._row(index * self.width)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        row = self._row
        for at in range(0, len(self.values), self.width):
            yield row(at)

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return self._same(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    def _same(self, other: _Rows) -> bool:
        return self.values == other.values

    __hash__ = None  # type: ignore[assignment]  # mutable, as the lists it replaces

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    def clear(self) -> None:
        del self.values[:]


class EnergyTrace(_Rows):
    """``(time, total energy J, 's'|'e'|'p', wattmin W)`` rows of ``out_consumed_energy.csv``."""

    __slots__ = ()
    width = 4

    def _row(self, at: int) -> tuple[float, float, str, float]:
        return tuple(self.values[at : at + 4])

    def __iter__(self) -> Iterator[tuple[float, float, str, float]]:
        v = self.values
        return zip(v[0::4], v[1::4], v[2::4], v[3::4])


class MachineStateTrace(_Rows):
    """``(time, nb_idle, nb_computing)`` rows of ``out_machine_states.csv``."""

    __slots__ = ()
    width = 3

    def _row(self, at: int) -> tuple[float, int, int]:
        return tuple(self.values[at : at + 3])

    def __iter__(self) -> Iterator[tuple[float, int, int]]:
        v = self.values
        return zip(v[0::3], v[1::3], v[2::3])


class PstateTrace(_Rows):
    """``(time, host ids, P-state)`` rows of ``out_pstate_changes.csv``.

    A row is ``time, P-state, first, end`` in ``values``, its host ids ``hosts[first:end]``
    (one flat list of every row's ids): the two rows of one switch (the transition, then the
    new state) share one copy of its ids.
    """

    __slots__ = ("hosts",)
    width = 4

    def __init__(self) -> None:
        super().__init__()
        self.hosts: list[int] = []

    def add(self, time: float, hosts: tuple[int, ...], state: int) -> None:
        """One row (the engine's per-switch rows go through its own ``extend``)."""
        first = len(self.hosts)
        self.hosts.extend(hosts)
        self.values.extend((time, state, first, len(self.hosts)))

    def _row(self, at: int) -> tuple[float, tuple[int, ...], int]:
        v = self.values
        return (v[at], tuple(self.hosts[v[at + 2] : v[at + 3]]), v[at + 1])

    def __iter__(self) -> Iterator[tuple[float, tuple[int, ...], int]]:
        v, hosts = self.values, self.hosts
        for at in range(0, len(v), 4):
            yield (v[at], tuple(hosts[v[at + 2] : v[at + 3]]), v[at + 1])

    def _same(self, other: _Rows) -> bool:
        return list(self) == list(other)  # the same rows may share ids differently

    def clear(self) -> None:
        del self.values[:], self.hosts[:]


__all__ = [
    "KIND_END",
    "KIND_PSTATE",
    "KIND_START",
    "EnergyTrace",
    "MachineStateTrace",
    "PstateTrace",
]
