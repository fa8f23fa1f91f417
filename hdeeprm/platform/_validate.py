"""Small validation helpers shared by the platform loaders.

Every check raises :class:`~hdeeprm.errors.InputError` with the file, the JSON path of the
offending value (``clusters[0].nodes[2].type``) and what was expected, so that a user can fix a
platform or type file without reading this code. Keys starting with ``_`` (``"_doc"``) are
comments and ignored everywhere.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from hdeeprm._jsonfile import read_json
from hdeeprm.errors import InputError

PathLike = str | os.PathLike[str] | None

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER = r"([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)"
_QUANTITY = re.compile(r"^\s*" + _NUMBER + r"\s*([A-Za-z]+)\s*$")

#: SimGrid's time units, in seconds.
TIME_UNITS: dict[str, float] = {
    "w": 7 * 86400.0,
    "d": 86400.0,
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
}


def _bandwidth_units() -> dict[str, float]:
    """SimGrid's bandwidth units, in bytes per second (bits are divided by 8)."""
    units: dict[str, float] = {}
    decimal = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
    binary = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
    for prefix, factor in (decimal | binary).items():
        units[f"{prefix}Bps"] = factor
        units[f"{prefix}bps"] = factor / 8.0
    return units


#: SimGrid's bandwidth units, in bytes per second.
BANDWIDTH_UNITS: dict[str, float] = _bandwidth_units()


def child(where: str, key: str | int) -> str:
    """JSON path of ``key`` inside ``where``: ``a.b``, ``a[3]`` or ``a["Bullx B500 (0)"]``."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{where}.{key}" if where else key
    return f"{where}[{json.dumps(key)}]"


def type_name(value: Any) -> str:
    """The JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def expect_object(
    value: Any,
    path: PathLike,
    where: str,
    required: Iterable[str] = (),
    optional: Iterable[str] = (),
) -> dict[str, Any]:
    """Check ``value`` is a JSON object with every ``required`` key and no unknown key."""
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type_name(value)}", path, where or None)
    required = tuple(required)
    allowed = set(required) | set(optional)
    for key in value:
        if not isinstance(key, str) or key.startswith("_"):
            continue
        if key not in allowed:
            hint = _suggest(key, allowed)
            raise InputError(
                f"unknown key {key!r}{hint}; allowed keys: {', '.join(sorted(allowed))}",
                path,
                child(where, key),
            )
    for key in required:
        if key not in value:
            # Inside an object: the object's path; at the top level: the key itself.
            raise InputError(f"missing required key {key!r}", path, where or key)
    return value


def expect_list(value: Any, path: PathLike, where: str, *, allow_empty: bool = False) -> list:
    """Check ``value`` is a JSON list (non-empty unless ``allow_empty``)."""
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {type_name(value)}", path, where)
    if not value and not allow_empty:
        raise InputError("expected a non-empty list", path, where)
    return value


def expect_str(value: Any, path: PathLike, where: str) -> str:
    """Check ``value`` is a non-empty string."""
    if not isinstance(value, str):
        raise InputError(f"expected a string, got {type_name(value)}", path, where)
    if not value.strip():
        raise InputError("expected a non-empty string", path, where)
    return value


def expect_int(value: Any, path: PathLike, where: str, *, minimum: int = 1) -> int:
    """Check ``value`` is an integer (not a boolean, not a float) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected an integer, got {type_name(value)} {value!r}", path, where)
    if value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise InputError(f"expected {what}, got {value}", path, where)
    return value


def expect_number(value: Any, path: PathLike, where: str, *, positive: bool = True) -> float:
    """Check ``value`` is a finite number, > 0 if ``positive`` else >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"expected a number, got {type_name(value)} {value!r}", path, where)
    number = float(value)
    if not math.isfinite(number):
        raise InputError(f"expected a finite number, got {value!r}", path, where)
    if positive and number <= 0:
        raise InputError(f"expected a positive number, got {value!r}", path, where)
    if not positive and number < 0:
        raise InputError(f"expected a non-negative number, got {value!r}", path, where)
    return number


def _quantity(
    value: Any, path: PathLike, where: str, units: Mapping[str, float], what: str, example: str
) -> float:
    if not isinstance(value, str):
        raise InputError(
            f"expected a {what} string with a unit such as {example!r}, got "
            f"{type_name(value)} {value!r}",
            path,
            where,
        )
    match = _QUANTITY.match(value)
    if match is None or match.group(2) not in units:
        unit = match.group(2) if match else None
        hint = f" (unknown unit {unit!r})" if unit else ""
        raise InputError(
            f"expected a {what} such as {example!r}{hint}, got {value!r}; "
            f"units: {', '.join(units)}",
            path,
            where,
        )
    return float(match.group(1)) * units[match.group(2)]


def parse_latency(value: Any, path: PathLike, where: str) -> float:
    """A SimGrid latency (``"75us"``, ``"1.5ms"``) in seconds; must be >= 0."""
    return _quantity(value, path, where, TIME_UNITS, "latency", "75us")


def parse_bandwidth(value: Any, path: PathLike, where: str) -> float:
    """A SimGrid bandwidth (``"10Gbps"``, ``"125MBps"``) in bytes per second; must be > 0."""
    result = _quantity(value, path, where, BANDWIDTH_UNITS, "bandwidth", "10Gbps")
    if result <= 0:
        raise InputError(f"expected a positive bandwidth, got {value!r}", path, where)
    return result


def _suggest(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def unknown_name(kind: str, name: str, known: Iterable[str], path: PathLike, where: str) -> None:
    """Raise the error for a reference to an undefined type, listing the closest names."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    if close:
        listing = f"closest matches: {', '.join(repr(c) for c in close)}"
    elif len(known) <= 30:
        listing = f"known {kind} types: {', '.join(repr(k) for k in known)}"
    else:
        listing = f"{len(known)} known {kind} types, e.g. {', '.join(repr(k) for k in known[:10])}"
    raise InputError(f"unknown {kind} type {name!r}; {listing}", path, where)


def load_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file; syntax errors and duplicate keys become :class:`InputError`."""
    return read_json(path, "platform file")
