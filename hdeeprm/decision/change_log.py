"""The log of node ids the core pool reports as changed, read by the fit indexes.

Its own module: the core pool (:mod:`hdeeprm.decision.resources`) holds such logs as node change
listeners and the fit indexes (:mod:`hdeeprm.decision.fit`) own them, so neither of the two
imports the other for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Compacting(Protocol):
    """The owner of a log: compacts it when it grows beyond its limit."""

    def compact(self) -> None: ...


class ChangeLog:
    """Node ids the pool reports as changed, appended in order (one append per change, shared
    by every watched size instead of one set insertion per size). Registered with the pool as a
    node change listener: a take appends to :attr:`nodes` itself (no call), a release calls
    :meth:`update`, which compacts beyond :attr:`limit` (takes alone can add at most one entry
    per core between two releases, so the log stays bounded)."""

    __slots__ = ("nodes", "base", "resets", "owner", "limit")

    def __init__(self, owner: Compacting, limit: int) -> None:
        #: Compacted by its owner beyond ``limit`` entries, so it stays bounded even when no
        #: size is asked for a long time.
        self.owner = owner
        self.limit = limit
        self.nodes: list[int] = []
        #: Absolute position of ``nodes[0]`` (positions keep growing across compactions).
        self.base = 0
        #: Bumped when the pool reports every node (a reset): every count is then redone.
        self.resets = 0

    def add(self, node: int) -> None:
        nodes = self.nodes
        nodes.append(node)
        if len(nodes) > self.limit:
            self.owner.compact()

    def update(self, nodes: Iterable[int]) -> None:
        if isinstance(nodes, range):  # the pool's reset: every node changed
            self.resets += 1
            self.base += len(self.nodes)
            self.nodes.clear()
        else:
            self.nodes.extend(nodes)
            if len(self.nodes) > self.limit:
                self.owner.compact()

    @property
    def end(self) -> int:
        return self.base + len(self.nodes)
