"""What ``hdeeprm-clean`` may remove from a folder: only files hdeeprm generated, by name.

* Outputs, always generated: Batsim's five ``out_*.csv``, ``insights.log``,
  ``hdeeprm_mem_bw_overutilization.csv``, ``training_log.csv``.
* Generated inputs (``platform.xml``, ``res_hierarchy.json``, ``workload.json``,
  ``job_limits.json``) only when ``.hdeeprm_inputs.json`` records that hdeeprm generated them:
  the launcher reuses a hand-written ``workload.json`` (thesis 4.3), and such a file is the
  user's. The record itself goes with them.
* Stray ``.tmp-*`` files left by interrupted atomic writes.
* ``run_NNN/`` folders of ``hdeeprm-launch -nr``: their generated files, and the folder itself
  when nothing else is in it.

Options files, models (``*.pt``) and anything else are never touched.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from hdeeprm.analysis.runfolder import (
    BATSIM_OUTPUTS,
    GENERATED_INPUTS,
    HDEEPRM_OUTPUTS,
    MANIFEST_FILE,
    TMP_PREFIX,
    RunFolderError,
)

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


def _recorded_inputs(folder: Path) -> set[str]:
    """Names of the inputs ``.hdeeprm_inputs.json`` says hdeeprm generated."""
    try:
        data = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(data, dict):
        return set()
    return {name for name in data if name in GENERATED_INPUTS}


def _plan_folder(folder: Path, plan: CleanPlan) -> list[Path]:
    """Add ``folder``'s generated files to ``plan``; return them."""
    found: list[Path] = []
    recorded = _recorded_inputs(folder)
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if entry.is_dir() and not entry.is_symlink():
            continue
        if not (entry.is_file() or entry.is_symlink()):
            continue
        if (
            name in BATSIM_OUTPUTS
            or name in HDEEPRM_OUTPUTS
            or name.startswith(TMP_PREFIX)
            or name == MANIFEST_FILE
        ):
            found.append(entry)
        elif name in GENERATED_INPUTS:
            if name in recorded:
                found.append(entry)
            else:
                plan.kept.append((entry, f"not recorded in {MANIFEST_FILE} as generated"))
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
