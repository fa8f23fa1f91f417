"""Views that readers derive once from an input that does not change (a platform) and share.

An environment builds a new engine and core pool at every reset; what they read from the
platform (per-host speed tables, per-core ids) is the same each time, so the first reader
builds it and the next ones reuse it. The views are read-only by contract: readers copy
what they change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Derived(dict[object, Any]):
    """Views by reader (a class, say). Copies and pickles of the input leave them out (a
    copy derives its own again): they may hold objects that do not pickle, or be large."""

    __slots__ = ()

    def view(self, key: object, build: Callable[[], T]) -> T:
        """The view of ``key``, built by ``build()`` the first time it is asked for."""
        value = self.get(key)
        if value is None:
            value = self[key] = build()
        return value

    def __reduce__(self) -> tuple[type[Derived], tuple[()]]:
        return (Derived, ())
