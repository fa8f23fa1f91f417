"""What ``hdeeprm-clean`` may remove from a folder: only files hdeeprm generated, by name.

* Outputs, always generated: Batsim's five ``out_*.csv``, ``insights.log``,
  ``hdeeprm_mem_bw_overutilization.csv``, ``training_log.csv``.
* Generated inputs (``platform.xml``, ``res_hierarchy.json``, ``workload.json``,
  ``job_limits.json``) only when ``.hdeeprm_inputs.json`` records that hdeeprm wrote the very
  bytes now in the file (:mod:`hdeeprm._manifest`): a hand-written file, or a generated one the
  user edited since, is the user's. The record itself goes with them.
* Stray ``.tmp-*`` files left by interrupted atomic writes.
* ``run_NNN/`` folders of ``hdeeprm-launch -nr``: their generated files, and the folder itself
  when nothing else is in it.

Options files, models (``*.pt``) and anything else are never touched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from hdeeprm._manifest import Manifest
from hdeeprm.analysis.runfolder import (
    BATSIM_OUTPUTS,
    GENERATED_INPUTS,
    HDEEPRM_OUTPUTS,
    MANIFEST_FILE,
    TMP_PREFIX,
    RunFolderError,
)
from hdeeprm.errors import InputError

_RUN_DIR = re.compile(r"run_\d{3,}")


@dataclass(slots=True)
class CleanPlan:
    """Files and folders to remove, and generated-looking files deliberately kept."""

    root: Path
    files: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    kept: list[tuple[Path, str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files or self.folders)

    def describe(self) -> list[str]:
        """One line per removal (paths relative to the cleaned folder), folders last."""
        lines = [str(p.relative_to(self.root)) for p in self.files]
        lines += [str(p.relative_to(self.root)) + "/" for p in self.folders]
        return lines


def _plan_folder(folder: Path, plan: CleanPlan) -> list[Path]:
    """Add ``folder``'s generated files to ``plan``; return them."""
    found: list[Path] = []
    try:
        manifest: Manifest | None = Manifest.load(folder)
    except InputError:
        manifest = None
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if entry.is_dir() and not entry.is_symlink():
            continue
        if not (entry.is_file() or entry.is_symlink()):
            continue
        if name in BATSIM_OUTPUTS or name in HDEEPRM_OUTPUTS or name.startswith(TMP_PREFIX):
            found.append(entry)
        elif name == MANIFEST_FILE:
            if manifest is None:
                plan.kept.append((entry, "not a record hdeeprm can read"))
            else:
                found.append(entry)
        elif name in GENERATED_INPUTS:
            if entry.is_symlink():
                plan.kept.append((entry, "a symbolic link: hdeeprm writes regular files"))
                continue
            owned, why = (
                (False, "unreadable record") if manifest is None else (manifest.ownership(name))
            )
            if owned:
                found.append(entry)
            else:
                plan.kept.append((entry, why))
    plan.files.extend(found)
    return found


def plan_clean(folder: str | os.PathLike[str]) -> CleanPlan:
    """Work out what :func:`execute` would remove from ``folder``; remove nothing."""
    root = Path(folder)
    if not root.is_dir():
        raise RunFolderError(f"{root} does not exist or is not a folder")
    plan = CleanPlan(root)
    _plan_folder(root, plan)
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and _RUN_DIR.fullmatch(entry.name):
            found = set(_plan_folder(entry, plan))
            if all(child in found for child in entry.iterdir()):
                plan.folders.append(entry)
            else:
                plan.kept.append((entry, "holds files hdeeprm did not generate"))
    return plan


def execute(plan: CleanPlan) -> int:
    """Remove what ``plan`` lists; return how many entries were removed.

    A file already gone is not an error; a folder that gained files meanwhile is kept.
    """
    removed = 0
    for path in plan.files:
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            pass
    for path in plan.folders:
        try:
            path.rmdir()
            removed += 1
        except OSError:
            pass  # it gained files meanwhile: keep it
    return removed
