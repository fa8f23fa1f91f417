"""The run folder's record of the input files hdeeprm generated (``.hdeeprm_inputs.json``).

Two promises rest on it: hdeeprm never overwrites or uses as its own a file it did not write,
and ``hdeeprm-clean`` removes exactly what hdeeprm wrote. So ownership is decided by content,
not by name: an entry records the SHA-256 of the bytes hdeeprm wrote, and a file is hdeeprm's
only while its bytes still hash to that (a user who edits a generated file makes it theirs).

Writes follow one order, so an interrupt at any instant leaves the record true:

1. the entry is marked ``writing`` with the hash of the new bytes *and* of the file it replaces
   (the manifest is written atomically): from now on either version is claimed;
2. the file is written atomically (a temporary ``.tmp-*`` sibling moved into place);
3. the entry is marked ``done`` with the new hash alone.

Interrupted after 1, the file on disk is the old one or the new one, and both are claimed;
never a file hdeeprm did not write, and never one it wrote unclaimed. Entries of the first
format (name -> parameters, no hash) are still honoured by name.

This module imports nothing heavy, so ``hdeeprm-clean`` starts fast.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdeeprm._atomic import write_json, write_text
from hdeeprm._jsonfile import too_deep
from hdeeprm.errors import InputError

MANIFEST_FILE = ".hdeeprm_inputs.json"


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """One process at a time checks and writes ``folder``'s generated inputs: several
    environments built at once from the same options (vector workers) would otherwise find
    each other's files written but not yet recorded, and refuse them as foreign. An advisory
    ``flock`` on the folder itself (no file is created); where the OS has none, no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a folder this process cannot open: the reads and writes will say so
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


FORMAT = 2
_CHUNK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks (about 1.7 GB/s here: a 45 MB trace
    hashes in under 30 ms, far less than converting it)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    """SHA-256 of ``text`` as written by :func:`hdeeprm._atomic.write_text` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class Entry:
    """What the manifest says about one generated file."""

    #: Everything the file derives from; equal keys mean the file is up to date.
    key: Any
    #: Hash of the bytes hdeeprm wrote (``None`` for first-format entries).
    sha256: str | None
    #: ``done``, or ``writing`` while the file is being replaced.
    state: str = "done"
    #: While ``writing``: hash of the hdeeprm file being replaced (``None``: there was none).
    previous: str | None = None
    #: A first-format entry: claimed by name, no hash to check.
    legacy: bool = False

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"state": self.state, "sha256": self.sha256, "key": self.key}
        if self.state != "done":
            doc["previous"] = self.previous
        return doc


class Manifest:
    """The record of one run folder; see the module docstring for the protocol."""

    def __init__(self, folder: Path, entries: dict[str, Entry] | None = None) -> None:
        self.folder = folder
        self.path = folder / MANIFEST_FILE
        self.entries: dict[str, Entry] = entries or {}

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> Manifest:
        """Read ``folder``'s manifest (an empty one when there is none).

        Raises:
            InputError: the file exists but is not a manifest hdeeprm wrote.
        """
        root = Path(folder)
        path = root / MANIFEST_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(root)
        except (OSError, UnicodeDecodeError) as exc:
            raise _corrupt(path, str(exc)) from None
        deep = too_deep(text)
        if deep is not None:
            raise _corrupt(path, deep)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _corrupt(path, f"not JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(data, dict):
            raise _corrupt(path, "expected a JSON object")
        if data.get("format") == FORMAT:
            files = data.get("files")
            if not isinstance(files, dict):
                raise _corrupt(path, "'files' should be an object")
            entries = {}
            for name, raw in files.items():
                if (
                    not isinstance(raw, dict)
                    or raw.get("state") not in ("done", "writing")
                    or not isinstance(raw.get("sha256"), str)
                ):
                    raise _corrupt(path, f"malformed entry for {name!r}")
                entries[name] = Entry(
                    raw.get("key"), raw["sha256"], raw["state"], raw.get("previous")
                )
            return cls(root, entries)
        # First format: {name: parameters}, written only after the files were complete.
        return cls(root, {name: Entry(raw, None, legacy=True) for name, raw in data.items()})

    def save(self) -> None:
        """Write the manifest atomically."""
        files = {name: entry.to_json() for name, entry in sorted(self.entries.items())}
        write_json(self.path, {"format": FORMAT, "files": files}, indent=1)

    def ownership(self, name: str) -> tuple[bool, str]:
        """Whether the file ``name`` now in the folder is hdeeprm's, and why not if it is not.

        An absent file is not owned (there is nothing to own).
        """
        target = self.folder / name
        if not target.is_file():
            return False, "absent"
        entry = self.entries.get(name)
        if entry is None:
            return False, f"not recorded in {MANIFEST_FILE}: hdeeprm did not write it"
        if entry.legacy:
            return True, ""
        digest = file_sha256(target)
        if digest == entry.sha256 or (entry.state == "writing" and digest == entry.previous):
            return True, ""
        return False, "changed since hdeeprm wrote it"

    def up_to_date(self, name: str, key: Any) -> bool:
        """Whether ``name`` is hdeeprm's, complete, and generated from ``key``."""
        entry = self.entries.get(name)
        return entry is not None and entry.state == "done" and not entry.legacy and entry.key == key

    def write(self, files: Sequence[tuple[str, str, Any]]) -> None:
        """Write ``(name, text, key)`` files into the folder under the protocol above.

        The caller has checked that every existing target is hdeeprm's (:meth:`ownership`).
        """
        staged = []
        for name, text, key in files:
            target = self.folder / name
            previous = file_sha256(target) if target.is_file() else None
            digest = text_sha256(text)
            self.entries[name] = Entry(key, digest, "writing", previous)
            staged.append((name, text, key, digest))
        self.save()
        for name, text, _key, _digest in staged:
            write_text(self.folder / name, text)
        for name, _text, key, digest in staged:
            self.entries[name] = Entry(key, digest)
        self.save()


def _corrupt(path: Path, why: str) -> InputError:
    return InputError(
        f"cannot read hdeeprm's record of generated files ({why}); it is written only by "
        "hdeeprm: remove it together with the generated files it listed, or use another "
        "run folder",
        path,
    )
