"""Reading user JSON files with errors that name the file and the line."""

from __future__ import annotations

import json
import os
from typing import Any

from hdeeprm.errors import InputError


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def parse_json(
    text: str, path: str | os.PathLike[str] | None, *, reject_duplicates: bool = True
) -> Any:
    """Parse JSON text, reporting the line of a syntax error (and duplicate keys)."""
    try:
        if reject_duplicates:
            return json.loads(text, object_pairs_hook=_no_duplicates)
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", path, f"line {exc.lineno}"
        ) from None
    except ValueError as exc:
        raise InputError(f"invalid JSON: {exc}", path) from None


def read_json(
    path: str | os.PathLike[str], what: str = "file", *, reject_duplicates: bool = True
) -> Any:
    """Read a JSON file. A missing file, unreadable bytes, bad syntax and (by default)
    duplicate keys all become :class:`InputError` naming the file; ``what`` names the kind of
    file in the not-found message (e.g. ``"options file"``).

    Large machine-written files (workloads) may pass ``reject_duplicates=False`` to keep
    the C parser's full speed.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise InputError(f"{what} not found", path) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", path) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not a UTF-8 text file ({exc.reason})", path) from None
    return parse_json(text, path, reject_duplicates=reject_duplicates)
