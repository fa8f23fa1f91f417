"""Reading user JSON files with errors that name the file and the line.

Every JSON input (options, sweep, platform and workload files, Batsim protocol messages) is
parsed here, with its nesting bounded: Python's parser recurses once per level, so a document
nested deeper than the interpreter's recursion limit (``"[" * 100000``) would end in a
``RecursionError`` traceback, and one a little shallower in a traceback further on.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from hdeeprm._inputfile import check_input_file
from hdeeprm.errors import InputError

#: Deepest nesting of arrays and objects accepted in any JSON input. The shipped files nest at
#: most 7 levels (options with an agent block); this leaves room for Python's own call stack
#: below the interpreter's default recursion limit (1,000), which the parser shares.
MAX_JSON_DEPTH = 500

#: A backslash escape (the backslash and the character after it), removed first so that the
#: quotes left are exactly those that open and close strings.
_ESCAPE = re.compile(r"\\.", re.DOTALL)
#: Bytes scanned at once (bounds the scan's temporary arrays to a few times this).
_CHUNK = 1 << 22


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (brackets inside strings do
    not count), without recursion; for any text, well-formed or not.

    Vectorised over the bytes: on a 32 MB workload this costs about a third of the parsing
    (a regular expression over every string would cost as much as the parsing itself).
    """
    import numpy as np

    if "\\" in text:
        text = _ESCAPE.sub("", text)
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    steps = np.zeros(256, dtype=np.int8)
    steps[[ord("["), ord("{")]] = 1
    steps[[ord("]"), ord("}")]] = -1
    deepest = level = quotes = 0
    for start in range(0, len(data), _CHUNK):
        chunk = data[start : start + _CHUNK]
        is_quote = chunk == ord('"')
        # Inside a string after an odd number of quotes; the uint8 sum keeps the parity.
        inside = (np.cumsum(is_quote, dtype=np.uint8) + quotes) & 1
        step = steps[chunk]
        brackets = step[(step != 0) & (inside == 0)]
        if len(brackets):
            depths = np.cumsum(brackets, dtype=np.int64) + level
            deepest = max(deepest, int(depths.max()))
            level = int(depths[-1])
        quotes = (quotes + int(np.count_nonzero(is_quote))) & 1
    return deepest


def too_deep(text: str) -> str | None:
    """The message for ``text`` nested deeper than :data:`MAX_JSON_DEPTH`, or None. Texts with
    at most that many opening brackets are accepted without scanning them."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return None
    depth = json_depth(text)
    if depth <= MAX_JSON_DEPTH:
        return None
    return (
        f"JSON nested {depth:,} levels deep; at most {MAX_JSON_DEPTH} levels of arrays and "
        "objects are accepted"
    )


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
    """Parse JSON text, reporting the line of a syntax error (and duplicate keys) and refusing
    nesting deeper than :data:`MAX_JSON_DEPTH`."""
    deep = too_deep(text)
    if deep is not None:
        raise InputError(deep, path)
    try:
        if reject_duplicates:
            return json.loads(text, object_pairs_hook=_no_duplicates)
        return json.loads(text)
    except RecursionError:
        # Within the limit but called from deep in the stack: still the input's nesting.
        raise InputError(
            f"JSON nested {json_depth(text):,} levels deep; too deep to parse here", path
        ) from None
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
    check_input_file(path, what)  # a FIFO would block ``open``; loops and folders named
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
