"""The sweep file: one options file expanded over a grid, validated before anything runs.

Format (JSON; relative paths are resolved against the sweep file's folder, ``$VARS`` expanded)::

    {"options": "options.json",
     "output_dir": "sweep_runs",
     "grid": {
       "policy_pair": ["shortest-high_gflops", "first-low_power"],
       "trace": ["traces/UniLu-Gaia-2014-1.swf.gz"],
       "window": [{"start_job": 0, "nb_jobs": 5000}, {"start_job": 5000, "nb_jobs": 5000}],
       "seed": [1, 2, 3],
       "objective": ["avg_job_slowdown", "makespan"],
       "platform": ["../platform_examples/gaia.json"]},
     "agent_file": "agent.py",
     "episodes": 10}

* ``options`` (required): the base options file (thesis appendix F format) or an inline
  options object; every run starts from it.
* ``grid`` (required, at least one axis): each axis is a list of values (``policy_pair`` also
  takes ``"all"``: every pair of the options' action space). Runs are the cartesian product, in
  the order ``platform, trace, window, seed, objective, policy_pair``. An axis that is absent
  keeps the base options' value.
* ``output_dir``: the sweep folder (default: the sweep file's name without ``.json``, beside it).
* ``custom_workload``: a Batsim ``workload.json`` used instead of the options' trace (``-cw``
  of ``hdeeprm-launch``); the ``trace`` and ``window`` axes then do not apply.
* ``keep_files``: file-name patterns of the run outputs to keep in each run folder, e.g.
  ``["out_jobs.csv", "out_schedule.csv"]`` (default: all). A whole-Gaia run writes about
  50 MB, mostly time series; on a cluster the shared filesystem carries only what is kept.
  The table's metrics are computed before the others are dropped.
* ``agent_file`` / ``episodes``: for LEARNING agents only (``-a`` and ``-nr`` of
  ``hdeeprm-launch``); ``objective`` is only a grid axis for them, as a fixed policy pair
  schedules the same way whatever the objective.

Run folders are named after the grid values (``sweep_runs/runs/seed=1__pair=first-low_power``),
so adding a value to an axis keeps the existing runs' names and a resumed sweep finds them.
Runs that need the same generated inputs (same platform, trace, window and seed) share one
``inputs/`` folder.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdeeprm._jsonfile import read_json
from hdeeprm.errors import InputError, path_argument
from hdeeprm.options import OBJECTIVES, Options, options_from_json

SWEEP_KEYS = (
    "options",
    "output_dir",
    "grid",
    "custom_workload",
    "keep_files",
    "agent_file",
    "episodes",
)
#: Grid axes, in the order the product is taken (the last one varies fastest).
AXES = ("platform", "trace", "window", "seed", "objective", "policy_pair")
#: Axes whose values change the generated inputs (platform.xml, workload.json, ...).
INPUT_AXES = ("platform", "trace", "window", "seed")
WINDOW_KEYS = ("start_job", "nb_jobs")
#: Short names used in run-folder names.
SHORT = {
    "platform": "platform",
    "trace": "trace",
    "window": "window",
    "seed": "seed",
    "objective": "objective",
    "policy_pair": "pair",
}

_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One run of a sweep: its grid values, its options document and its folders.

    Everything here is plain data (no open files), so it crosses process and machine
    boundaries unchanged.
    """

    run_id: str
    #: Grid values of this run, by axis (only the axes of the grid).
    params: dict[str, Any]
    #: The run's options document, paths absolute (written as the run's ``options.json``).
    options: dict[str, Any]
    run_dir: str
    inputs_dir: str
    agent_file: str | None = None
    episodes: int = 1
    custom_workload: str | None = None
    #: File-name patterns of the outputs kept in the run folder (``None``: all).
    keep_files: tuple[str, ...] | None = None
    #: SHA-256 of every input file the run reads (by role), hashed once per sweep
    #: (``None``: hashed when the fingerprint is asked for).
    input_sha256: dict[str, str | None] | None = None

    def load_options(self) -> Options:
        """The validated options of this run (anchored at its run folder)."""
        return options_from_json(self.options, Path(self.run_dir) / "options.json")

    def fingerprint(self) -> str:
        """Identity of the run's work: a finished run is reused only when this matches."""
        digests = self.input_sha256
        if digests is None:
            digests = input_digests(self, {})
        # The bytes of every input count too: a trace edited in place must not reuse the
        # results it produced before.
        doc: dict[str, Any] = {"options": self.options, "episodes": self.episodes, **digests}
        text = json.dumps(doc, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


def input_files(run: RunSpec) -> dict[str, str | None]:
    """The input files a run reads, by role (``None``: the run has no such file)."""
    options = run.options
    trace = options.get("workload_file_path") or None
    if run.custom_workload is not None:
        trace = None  # -cw replaces the options' trace
    return {
        "platform": options.get("platform_file_path") or None,
        "trace": trace,
        "custom_workload": run.custom_workload,
        "agent": run.agent_file,
    }


def input_digests(run: RunSpec, cache: dict[str, str | None]) -> dict[str, str | None]:
    """SHA-256 of the run's input files and of the type library files, by role.

    ``cache`` maps a path to its digest, so a file shared by many runs is read once.
    A file that cannot be read gets ``None`` (the run then fails and says why). Types
    defined inside a platform file are covered by the platform file's digest.
    """
    from hdeeprm._manifest import file_sha256
    from hdeeprm.platform.library import CATEGORIES, shipped_type_file

    def digest(path: str) -> str | None:
        if path not in cache:
            try:
                cache[path] = file_sha256(path)
            except OSError:
                cache[path] = None
        return cache[path]

    digests = {
        f"{role}_sha256": None if path is None else digest(path)
        for role, path in input_files(run).items()
    }
    for category in CATEGORIES:
        digests[f"{category}_types_sha256"] = digest(shipped_type_file(category))
    return digests


@dataclass(slots=True)
class Sweep:
    """A validated sweep: where it lives and the runs it expands to."""

    source: Path | None
    output_dir: Path
    axes: tuple[str, ...]
    runs: list[RunSpec] = field(default_factory=list)

    @property
    def inputs_dirs(self) -> list[str]:
        """The distinct inputs folders, in first-use order."""
        return list(dict.fromkeys(run.inputs_dir for run in self.runs))


def _fail(path: str, where: str, message: str) -> InputError:
    return InputError(message, path, where)


def _resolve(raw: str, base: Path) -> Path:
    path = Path(os.path.expandvars(os.path.expanduser(raw)))
    return path if path.is_absolute() else (base / path).resolve()


def _absolute_paths(doc: dict[str, Any], base: Path) -> dict[str, Any]:
    """A copy of an options document with its file paths made absolute (anchored at ``base``),
    so it can be written into any run folder."""
    doc = copy.deepcopy(doc)
    for key in ("platform_file_path", "workload_file_path"):
        value = doc.get(key)
        if isinstance(value, str) and value:
            doc[key] = str(_resolve(value, base))
    return doc


def _slug(value: Any) -> str:
    if isinstance(value, dict):  # a window
        start, nb = value.get("start_job", 0), value.get("nb_jobs")
        return f"{start}-{'all' if nb is None else nb}"
    text = str(value)
    if isinstance(value, Path) or "/" in text:
        name = Path(text).name
        for suffix in (".gz", ".swf", ".json"):
            name = name.removesuffix(suffix)
        text = name
    return _UNSAFE.sub("_", text) or "_"


def _check_list(path: str, where: str, value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise _fail(path, where, "expected a non-empty list of values")
    return value


def _check_unique(path: str, where: str, values: list[Any], slugs: list[str]) -> None:
    seen: dict[str, int] = {}
    for index, slug in enumerate(slugs):
        if slug in seen:
            raise _fail(
                path,
                f"{where}[{index}]",
                f"{json.dumps(values[index], default=str)} gives the same run-folder name "
                f"'{slug}' as {where}[{seen[slug]}]; values must be distinct (files: distinct "
                "names)",
            )
        seen[slug] = index


def load_sweep(
    path: str | os.PathLike[str], output_dir: str | os.PathLike[str] | None = None
) -> Sweep:
    """Read and validate a sweep file (format in the module docstring); ``output_dir``
    replaces the file's ``output_dir``."""
    spath = path_argument(path, "load_sweep(path)", "a sweep file", "sweep_from_json(raw, path)")
    raw = read_json(spath, "sweep file")
    return sweep_from_json(raw, spath, output_dir)


def sweep_from_json(
    raw: Any, path: str | os.PathLike[str], output_dir: str | os.PathLike[str] | None = None
) -> Sweep:
    """Validate a parsed sweep document; ``path`` anchors relative paths and error messages."""
    source = Path(path).resolve()
    where_file = str(source)
    base = source.parent
    if not isinstance(raw, dict):
        raise _fail(where_file, "", "expected a JSON object with keys options and grid")
    for key in raw:
        if key not in SWEEP_KEYS:
            raise _fail(
                where_file, key, f"unknown key '{key}'; allowed keys: {', '.join(SWEEP_KEYS)}"
            )
    for required in ("options", "grid"):
        if required not in raw:
            raise _fail(where_file, required, "missing required key")

    # The base options: a file (validated as itself, so its errors name it) or inline.
    options_raw = raw["options"]
    if isinstance(options_raw, str):
        options_path = _resolve(options_raw, base)
        if not options_path.is_file():
            raise _fail(where_file, "options", f"options file not found: {options_path}")
        base_doc = read_json(options_path, "options file")
        base_options = options_from_json(base_doc, options_path)
        base_doc = _absolute_paths(base_doc, options_path.parent)
    elif isinstance(options_raw, dict):
        try:
            base_options = options_from_json(options_raw, source)
        except InputError as exc:
            raise _fail(where_file, f"options.{exc.where or ''}".rstrip("."), exc.message) from None
        base_doc = _absolute_paths(options_raw, base)
    else:
        raise _fail(where_file, "options", "expected the path of an options file or an object")

    out_raw = raw.get("output_dir", source.stem if source.suffix == ".json" else source.name)
    if not isinstance(out_raw, str) or not out_raw:
        raise _fail(where_file, "output_dir", "expected a folder path")
    out = _resolve(out_raw, base) if output_dir is None else Path(output_dir).resolve()

    custom_workload = raw.get("custom_workload")
    if custom_workload is not None:
        if not isinstance(custom_workload, str) or not custom_workload:
            raise _fail(where_file, "custom_workload", "expected the path of a Batsim workload")
        if not _resolve(custom_workload, base).is_file():
            raise _fail(
                where_file,
                "custom_workload",
                f"file not found: {_resolve(custom_workload, base)}",
            )
        custom_workload = str(_resolve(custom_workload, base))

    keep_files = raw.get("keep_files")
    if keep_files is not None:
        if (
            not isinstance(keep_files, list)
            or not keep_files
            or not all(isinstance(p, str) and p for p in keep_files)
        ):
            raise _fail(
                where_file,
                "keep_files",
                'expected a non-empty list of file-name patterns, e.g. ["out_jobs.csv", "*.log"]',
            )
        keep_files = tuple(keep_files)

    learning = base_options.agent.type == "LEARNING"
    agent_file = raw.get("agent_file")
    episodes = raw.get("episodes", 1)
    if agent_file is not None:
        if not learning:
            raise _fail(where_file, "agent_file", "only for LEARNING agents (options' agent.type)")
        if not isinstance(agent_file, str) or not _resolve(agent_file, base).is_file():
            raise _fail(where_file, "agent_file", f"agent file not found: {agent_file!r}")
        agent_file = str(_resolve(agent_file, base))
    elif learning:
        raise _fail(
            where_file, "agent_file", "missing: a LEARNING agent needs its Python class file"
        )
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise _fail(where_file, "episodes", f"expected an integer >= 1, got {episodes!r}")
    if "episodes" in raw and not learning:
        raise _fail(where_file, "episodes", "only for LEARNING agents (options' agent.type)")

    grid = raw["grid"]
    if not isinstance(grid, dict) or not grid:
        raise _fail(
            where_file, "grid", f"expected an object with at least one of: {', '.join(AXES)}"
        )
    for key in grid:
        if key not in AXES:
            raise _fail(
                where_file, f"grid.{key}", f"unknown axis '{key}'; allowed axes: {', '.join(AXES)}"
            )
    values: dict[str, list[Any]] = {}
    for axis in AXES:
        if axis in grid:
            values[axis] = _axis_values(where_file, axis, grid[axis], base, base_options, learning)
    axes = tuple(values)
    no_workload = base_options.workload_file_path is None and not base_options.synthetic_workload
    if custom_workload is None and no_workload and "trace" not in values:
        raise _fail(
            where_file,
            "options",
            "no workload: the options need workload_file_path or synthetic_workload, or give "
            "the sweep a custom_workload or a grid.trace axis",
        )
    if custom_workload is not None:
        for axis in ("trace", "window"):
            if axis in values:
                raise _fail(
                    where_file,
                    f"grid.{axis}",
                    "does not apply with custom_workload (a fixed Batsim workload)",
                )

    sweep = Sweep(source, out, axes)
    hashed: dict[str, str | None] = {}  # each input file is read once per sweep
    for combo in itertools.product(*(values[a] for a in axes)):
        params = dict(zip(axes, combo))
        doc = _apply(base_doc, params)
        run_id = "__".join(f"{SHORT[a]}={_slug(params[a])}" for a in axes)
        input_key = "__".join(f"{SHORT[a]}={_slug(params[a])}" for a in axes if a in INPUT_AXES)
        run_dir = out / "runs" / run_id
        try:
            options_from_json(doc, run_dir / "options.json")
        except InputError as exc:
            raise _fail(where_file, "grid", f"run {run_id}: {exc}") from None
        run = RunSpec(
            run_id=run_id,
            params={a: _plain(v) for a, v in params.items()},
            options=doc,
            run_dir=str(run_dir),
            inputs_dir=str(out / "inputs" / (input_key or "default")),
            agent_file=agent_file,
            episodes=episodes,
            custom_workload=custom_workload,
            keep_files=keep_files,
        )
        sweep.runs.append(dataclasses.replace(run, input_sha256=input_digests(run, hashed)))
    return sweep


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def _axis_values(
    path: str, axis: str, raw: Any, base: Path, options: Options, learning: bool
) -> list[Any]:
    where = f"grid.{axis}"
    if axis == "policy_pair":
        if learning:
            raise _fail(path, where, "policy pairs are for CLASSIC agents (options' agent.type)")
        allowed = options.env.action_names
        if raw == "all":
            raw = [name for name in allowed if name != "void"]
        items = _check_list(path, where, raw)
        for index, item in enumerate(items):
            if not isinstance(item, str) or item not in allowed:
                raise _fail(
                    path,
                    f"{where}[{index}]",
                    f"got {json.dumps(item)}; expected 'JOBPOLICY-COREPOLICY' from the action "
                    f'space ({len(allowed)} pairs, e.g. {allowed[0]}) or "all"',
                )
    elif axis == "objective":
        if not learning:
            raise _fail(
                path,
                where,
                "objectives only change LEARNING runs (rewards); a CLASSIC policy pair "
                "schedules the same way whatever the objective, so the runs would repeat",
            )
        items = _check_list(path, where, raw)
        for index, item in enumerate(items):
            if item not in OBJECTIVES:
                raise _fail(
                    path,
                    f"{where}[{index}]",
                    f"got {json.dumps(item, default=str)}; allowed values: {', '.join(OBJECTIVES)}",
                )
    elif axis == "seed":
        items = _check_list(path, where, raw)
        for index, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, int) or item < 0:
                raise _fail(path, f"{where}[{index}]", f"expected an integer >= 0, got {item!r}")
    elif axis == "window":
        if options.synthetic_workload is not None:
            raise _fail(
                path,
                where,
                "windows select jobs of a trace; the options generate a "
                "synthetic workload (use the seed axis instead)",
            )
        items = _check_list(path, where, raw)
        for index, item in enumerate(items):
            here = f"{where}[{index}]"
            if not isinstance(item, dict) or not item:
                raise _fail(path, here, 'expected an object like {"start_job": 0, "nb_jobs": 1000}')
            for key, value in item.items():
                if key not in WINDOW_KEYS:
                    raise _fail(
                        path,
                        f"{here}.{key}",
                        f"unknown key '{key}'; allowed keys: {', '.join(WINDOW_KEYS)}",
                    )
                low = 0 if key == "start_job" else 1
                if isinstance(value, bool) or not isinstance(value, int) or value < low:
                    raise _fail(
                        path, f"{here}.{key}", f"expected an integer >= {low}, got {value!r}"
                    )
    else:  # platform, trace: files
        items = _check_list(path, where, raw)
        resolved = []
        for index, item in enumerate(items):
            here = f"{where}[{index}]"
            if not isinstance(item, str) or not item:
                raise _fail(path, here, "expected a file path")
            file = _resolve(item, base)
            if not file.is_file():
                raise _fail(path, here, f"file not found: {file}")
            resolved.append(file)
        if axis == "trace" and options.synthetic_workload is not None:
            raise _fail(
                path,
                where,
                "the options generate a synthetic workload; remove "
                "synthetic_workload from them to sweep traces",
            )
        items = resolved
    _check_unique(path, where, items, [_slug(v) for v in items])
    return items


def _apply(base_doc: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """The options document of one grid point."""
    doc = copy.deepcopy(base_doc)
    pyb = doc.setdefault("pybatsim", {})
    for axis, value in params.items():
        if axis == "platform":
            doc["platform_file_path"] = str(value)
            doc.pop("nb_resources", None)  # the platform decides its core count
        elif axis == "trace":
            doc["workload_file_path"] = str(value)
        elif axis == "window":
            doc["start_job"] = value.get("start_job", 0)
            if "nb_jobs" in value:
                doc["nb_jobs"] = value["nb_jobs"]
            else:
                doc.pop("nb_jobs", None)
        elif axis == "seed":
            doc["seed"] = value
        elif axis == "objective":
            pyb.setdefault("env", {})["objective"] = value
        elif axis == "policy_pair":
            pyb.setdefault("agent", {})["policy_pair"] = value
    return doc
