"""A max segment tree over fixed slots: point updates and "leftmost slot >= x" in O(log n).

The resource manager ranks processors once by a static key and asks for the best one whose node
still has a task's memory free; the fit index asks whether any node with a free core has that
much memory. Both are "leftmost (or any) slot whose value reaches a threshold" queries.
"""

from __future__ import annotations

NEG_INF = float("-inf")


class MaxTree:
    """``n`` slots holding floats (``-inf`` = absent), with their maximum per subtree."""

    __slots__ = ("size", "tree")

    def __init__(self, values: list[float]) -> None:
        size = 1
        while size < max(len(values), 1):
            size *= 2
        self.size = size
        tree = [NEG_INF] * (2 * size)
        tree[size : size + len(values)] = values
        for i in range(size - 1, 0, -1):
            left, right = tree[2 * i], tree[2 * i + 1]
            tree[i] = left if left >= right else right
        self.tree = tree

    @property
    def top(self) -> float:
        """The largest value (``-inf`` when every slot is absent)."""
        return self.tree[1]

    def set(self, slot: int, value: float) -> None:
        """Store ``value`` in ``slot``; stop climbing as soon as a maximum is unchanged."""
        tree = self.tree
        i = slot + self.size
        if tree[i] == value:
            return
        tree[i] = value
        i >>= 1
        while i:
            left, right = tree[2 * i], tree[2 * i + 1]
            best = left if left >= right else right
            if tree[i] == best:
                return
            tree[i] = best
            i >>= 1

    def set_many(self, slots: list[int], values: list[float]) -> None:
        """Store ``values[k]`` in ``slots[k]`` for every ``k``, then recompute the maxima above
        them level by level, each internal node once: neighbouring slots (a job's processors
        are neighbours in the ranking) share their ancestors, so ``k`` updates cost about
        ``2k + log n`` node visits instead of ``k log n``."""
        tree, size = self.tree, self.size
        level: set[int] = set()
        for slot, value in zip(slots, values):
            i = slot + size
            if tree[i] != value:
                tree[i] = value
                if i > 1:
                    level.add(i >> 1)
        while level:
            above: set[int] = set()
            for i in level:
                left, right = tree[2 * i], tree[2 * i + 1]
                best = left if left >= right else right
                if tree[i] != best:
                    tree[i] = best
                    if i > 1:
                        above.add(i >> 1)
            level = above

    def leftmost_at_least(self, threshold: float) -> int | None:
        """The lowest slot whose value is ``>= threshold``, or ``None``."""
        tree = self.tree
        if not tree[1] >= threshold:
            return None
        i, size = 1, self.size
        while i < size:
            i *= 2
            if not tree[i] >= threshold:
                i += 1
        return i - size

    def leftmost_from(self, start: int, threshold: float) -> int | None:
        """The lowest slot ``>= start`` whose value is ``>= threshold``, or ``None``: climb
        from ``start`` to the first subtree to its right that holds such a value, then
        descend into it (O(log n))."""
        tree, size = self.tree, self.size
        if start >= size:
            return None
        i = start + size
        if tree[i] >= threshold:
            return start
        while True:
            while i & 1:  # a right child: its right neighbour is under an ancestor
                i >>= 1
            if not i:
                return None
            i += 1
            if tree[i] >= threshold:
                break
        while i < size:
            i *= 2
            if not tree[i] >= threshold:
                i += 1
        return i - size
