"""Batsim's interval-set string form of host-id sets: ``"0-3 7 9-10"``.

Batsim writes allocations (``out_jobs.csv``), P-state changes and protocol fields this way:
maximal runs of consecutive ids as ``first-last``, single ids alone, separated by spaces, in
increasing order.
"""

from __future__ import annotations

from collections.abc import Iterable

from hdeeprm.errors import InputError


def format_interval_set(ids: Iterable[int]) -> str:
    """``[0, 1, 2, 3, 7]`` -> ``"0-3 7"`` (duplicates ignored, any input order)."""
    ordered = sorted(set(ids))
    if not ordered:
        return ""
    first, last = ordered[0], ordered[-1]
    if last - first == len(ordered) - 1:  # one run (most of a trace's allocations and switches)
        return str(first) if first == last else f"{first}-{last}"
    parts: list[str] = []
    start = prev = ordered[0]
    for value in ordered[1:]:
        if value != prev + 1:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = value
        prev = value
    parts.append(str(start) if start == prev else f"{start}-{prev}")
    return " ".join(parts)


def parse_interval_set(text: str) -> list[int]:
    """``"0-3 7"`` -> ``[0, 1, 2, 3, 7]``; raises :class:`InputError` on malformed text."""
    ids: list[int] = []
    for part in text.split():
        try:
            if "-" in part:
                low, high = part.split("-")
                first, last = int(low), int(high)
                if last < first:
                    raise ValueError
                ids.extend(range(first, last + 1))
            else:
                ids.append(int(part))
        except ValueError:
            raise InputError(
                f"bad interval {part!r} in {text!r}; expected 'a-b' ranges or single ids"
            ) from None
    return sorted(set(ids))
