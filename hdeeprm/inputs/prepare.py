"""Generate whatever input files a run is missing, and know when existing ones are stale.

A run folder holds ``platform.xml``, ``res_hierarchy.json``, ``workload.json`` and
``job_limits.json``. hdeeprm records in ``.hdeeprm_inputs.json`` (:mod:`hdeeprm._manifest`) the
bytes it wrote and everything each file derives from, and:

* regenerates a file whose sources changed: the platform JSON and the shipped type library
  (content hashes; inline ``types`` are part of the platform file), the trace's bytes (a
  streamed SHA-256), the options that shape the workload (seed, window, ``use_walltime``, the
  effective ``mem_bw_range``, the platform's reference speed and size) and the hdeeprm version;
* never overwrites, nor uses as if generated, a file it did not write (or one edited since):
  the run stops with an :class:`~hdeeprm.errors.InputError` naming the file and what to do
  (pass a hand-written workload with ``-cw``, or use another run folder);
* keeps the record true whatever instant a run is interrupted at, so ``hdeeprm-clean`` removes
  exactly what hdeeprm wrote.

Unless the options set ``mem_bw_range``, the per-job memory bandwidth is drawn from a range
fitted to the platform (:mod:`hdeeprm.workload.bandwidth`); a workload whose jobs over-subscribe
every processor by construction is reported with a warning on the ``hdeeprm.experiment``
logger.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdeeprm import __version__
from hdeeprm._atomic import ensure_dir, json_text
from hdeeprm._inputfile import check_input_file
from hdeeprm._manifest import MANIFEST_FILE as MANIFEST_FILE
from hdeeprm._manifest import Manifest, file_sha256, folder_lock
from hdeeprm.errors import InputError
from hdeeprm.options import Options
from hdeeprm.platform import Platform, load_platform
from hdeeprm.platform.library import CATEGORIES, shipped_type_file
from hdeeprm.platform.serialize import hierarchy_to_dict
from hdeeprm.platform.simgrid import platform_xml as render_platform_xml
from hdeeprm.simulation.platform_xml import SimPlatform, load_platform_xml
from hdeeprm.workload import (
    ConversionSummary,
    JobLimits,
    Workload,
    compute_job_limits,
    convert_swf,
    load_job_limits,
    load_workload,
    lublin_workload,
)
from hdeeprm.workload.bandwidth import BandwidthCheck, check_bandwidth, default_mem_bw_range

PLATFORM_XML_FILE = "platform.xml"
HIERARCHY_FILE = "res_hierarchy.json"
WORKLOAD_FILE = "workload.json"
JOB_LIMITS_FILE = "job_limits.json"
GENERATED_INPUTS = (PLATFORM_XML_FILE, HIERARCHY_FILE, WORKLOAD_FILE, JOB_LIMITS_FILE)

logger = logging.getLogger("hdeeprm.experiment")


@dataclass(slots=True)
class ExperimentInputs:
    """Everything a run needs, loaded, with the paths of the files it came from."""

    options: Options
    output_dir: Path
    platform: Platform
    platform_xml: Path
    #: ``platform_xml`` as the engine sees it (loaded once, shared by every run and environment
    #: built from these inputs: the engine only reads it).
    sim_platform: SimPlatform
    hierarchy_json: Path
    workload: Workload
    workload_path: Path
    job_limits: JobLimits
    #: Names of the files written by this call (the others were reused).
    generated: list[str] = field(default_factory=list)
    #: The conversion summary when the workload was converted or generated now.
    conversion: ConversionSummary | None = None
    #: The ``mem_bw`` range (GB/s) a converted or generated workload is drawn from (``None``
    #: with ``-cw``).
    mem_bw_range: tuple[float, float] | None = None
    #: Jobs that over-subscribe every processor by construction.
    bandwidth: BandwidthCheck | None = None


def _type_library_digest() -> str:
    """Hash of the shipped type library files (a platform derives from them too)."""
    return "-".join(file_sha256(shipped_type_file(c))[:16] for c in CATEGORIES)


def _foreign_file_error(path: Path, why: str, custom: bool) -> InputError:
    name = path.name
    if name == WORKLOAD_FILE:
        todo = f"to run it, pass it with -cw {path}; otherwise choose another run folder (-o)"
    elif name == JOB_LIMITS_FILE and not custom:
        todo = (
            "if it belongs to a hand-written workload, pass that workload with -cw; otherwise "
            "choose another run folder (-o) or move the file away"
        )
    else:
        todo = (
            "hdeeprm generates it from the options: choose another run folder (-o) or move "
            "the file away"
        )
    return InputError(
        f"this run generates {name} here, but the {name} already in the run folder is not "
        f"hdeeprm's ({why}); hdeeprm neither overwrites it nor uses it as generated: {todo}",
        path,
    )


def prepare_inputs(
    options: Options,
    output_dir: str | os.PathLike[str] | None = None,
    *,
    custom_workload: str | os.PathLike[str] | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> ExperimentInputs:
    """Load the platform and workload an options file describes, generating missing files.

    Args:
        options: validated options (see :func:`hdeeprm.options.load_options`).
        output_dir: the run folder; defaults to the options file's folder.
        custom_workload: a Batsim ``workload.json`` to use instead of the options' trace
            (``-cw`` of ``hdeeprm-launch``).
        log: receives one line per file generated or reused.

    Raises:
        InputError: bad inputs, or a file in the run folder that hdeeprm would have to
            generate but did not write (nothing is written then).
    """
    # Refused before anything is opened: a FIFO would block, a symlink loop would not resolve.
    source = f" of {options.source.name}" if options.source else ""
    check_input_file(options.platform_file_path, "platform file", "platform_file_path" + source)
    if custom_workload is not None:
        check_input_file(custom_workload, "workload file", "-cw")
    elif options.synthetic_workload is None and options.workload_file_path is not None:
        check_input_file(options.workload_file_path, "trace", "workload_file_path" + source)
    out = Path(output_dir) if output_dir is not None else options.base_dir
    ensure_dir(out)
    with folder_lock(out):
        return _prepare_in(out, options, custom_workload, log, source)


def _prepare_in(
    out: Path,
    options: Options,
    custom_workload: str | os.PathLike[str] | None,
    log: Callable[[str], None],
    source: str,
) -> ExperimentInputs:
    """:func:`prepare_inputs` once the run folder ``out`` is this process's."""
    manifest = Manifest.load(out)
    custom_path = Path(custom_workload).resolve() if custom_workload is not None else None

    platform = load_platform(options.platform_file_path)
    nb_cores = len(platform.cores)
    if options.nb_resources is not None and options.nb_resources != nb_cores:
        where = str(options.source) if options.source else "<options>"
        raise InputError(
            f"nb_resources is {options.nb_resources} but {options.platform_file_path.name} "
            f"has {nb_cores} cores; set nb_resources to {nb_cores} or remove it",
            where,
            "nb_resources",
        )

    # Refuse before writing anything: every file this run may write must be absent or ours.
    user_limits = False
    for name in GENERATED_INPUTS:
        path = out / name
        if custom_path is not None and name == WORKLOAD_FILE:
            continue  # with -cw, the run folder's workload.json is neither read nor written
        owned, why = manifest.ownership(name)
        if owned or why == "absent":
            continue
        if (
            custom_path is not None
            and name == JOB_LIMITS_FILE
            and custom_path.parent == out.resolve()
        ):
            user_limits = True  # the limits of the user's workload, beside it: use them as is
            continue
        raise _foreign_file_error(path, why, custom_path is not None)

    # A user's workload is checked before anything is written to the run folder.
    custom = load_workload(custom_path) if custom_path is not None else None

    def fresh(name: str, key: Any) -> bool:
        target = out / name
        if not target.exists():
            log(f"generating {target}")
            return False
        if manifest.up_to_date(name, key):
            log(f"reusing {target}")
            return True
        log(f"regenerating {target}: its parameters changed")
        return False

    generated: list[str] = []
    platform_key = {
        "platform_sha256": file_sha256(options.platform_file_path),
        "type_library": _type_library_digest(),
        "hdeeprm": __version__,
    }
    platform_xml = out / PLATFORM_XML_FILE
    hierarchy_json = out / HIERARCHY_FILE
    to_write = []
    if not fresh(PLATFORM_XML_FILE, platform_key):
        to_write.append((PLATFORM_XML_FILE, render_platform_xml(platform), platform_key))
    if not fresh(HIERARCHY_FILE, platform_key):
        text = json_text(hierarchy_to_dict(platform), indent=1)
        to_write.append((HIERARCHY_FILE, text, platform_key))
    if to_write:
        manifest.write(to_write)
        generated += [name for name, _text, _key in to_write]

    conversion = None
    mem_bw_range = None
    limits_path = out / JOB_LIMITS_FILE
    if custom_path is not None and custom is not None:
        workload_path = custom_path
        workload = custom
        # Limits beside the workload are the user's, unless they are the ones this run folder
        # generated for an earlier workload (the workload lives in the run folder itself).
        beside: Path | None = None
        if workload_path.parent != out.resolve():
            beside = workload_path.parent / JOB_LIMITS_FILE
        if user_limits:
            job_limits = load_job_limits(limits_path)
            log(f"using {limits_path} beside the custom workload")
        else:
            limits_key = {
                "custom_workload": file_sha256(workload_path),
                # The path lets the analysis tools find the workload of a -cw run (mem_bubbles).
                "path": str(workload_path),
                "limits_beside": file_sha256(beside) if beside and beside.is_file() else None,
                "hdeeprm": __version__,
            }
            if fresh(JOB_LIMITS_FILE, limits_key):
                job_limits = load_job_limits(limits_path)
            else:
                job_limits = (
                    load_job_limits(beside)
                    if beside is not None and beside.is_file()
                    else compute_job_limits(workload, workload_path)
                )
                manifest.write(
                    [(JOB_LIMITS_FILE, json_text(job_limits.to_json(), indent=2), limits_key)]
                )
                generated.append(JOB_LIMITS_FILE)
        log(f"using custom workload {workload_path} ({len(workload.jobs)} jobs)")
    else:
        workload_path = out / WORKLOAD_FILE
        if options.mem_bw_range is not None:
            mem_bw_range = options.mem_bw_range
        else:
            mem_bw_range = default_mem_bw_range(p.mem_bw for p in platform.processors)
            log(
                f"memory bandwidth per job drawn from {mem_bw_range[0]:g}-{mem_bw_range[1]:g} "
                f"GB/s (1/8 to 3/4 of the slowest processor of "
                f"{options.platform_file_path.name}; set mem_bw_range to choose)"
            )
        workload_key = _workload_params(options, platform, mem_bw_range)
        # Both checks run, so the log says what happens to each file.
        workload_fresh = fresh(WORKLOAD_FILE, workload_key)
        limits_fresh = fresh(JOB_LIMITS_FILE, workload_key)
        if workload_fresh and limits_fresh:
            workload = load_workload(workload_path)
            job_limits = load_job_limits(limits_path)
        else:
            result = _make_workload(options, platform, mem_bw_range)
            workload = result.workload
            if options.use_walltime:
                for job in workload.jobs:
                    req_time = workload.profiles[job.profile].req_time
                    if req_time is not None and req_time > 0:
                        job.walltime = req_time
            job_limits = result.limits
            manifest.write(
                [
                    (WORKLOAD_FILE, json_text(workload.to_json()), workload_key),
                    (JOB_LIMITS_FILE, json_text(job_limits.to_json(), indent=2), workload_key),
                ]
            )
            generated += [WORKLOAD_FILE, JOB_LIMITS_FILE]
            conversion = result.summary

    if len(workload.jobs) == 0:
        raise InputError("the workload has no jobs", workload_path)
    bandwidth = check_bandwidth(
        (float(workload.profiles[job.profile].extra.get("mem_bw", 0.0)) for job in workload.jobs),
        (p.mem_bw for p in platform.processors),
    )
    if bandwidth.nb_over:
        logger.warning("%s: %s", workload_path, bandwidth.message(options.platform_file_path.name))
    return ExperimentInputs(
        options=options,
        output_dir=out,
        platform=platform,
        platform_xml=platform_xml,
        sim_platform=load_platform_xml(platform_xml),
        hierarchy_json=hierarchy_json,
        workload=workload,
        workload_path=workload_path,
        job_limits=job_limits,
        generated=generated,
        conversion=conversion,
        mem_bw_range=mem_bw_range,
        bandwidth=bandwidth,
    )


def _workload_params(
    options: Options, platform: Platform, mem_bw_range: tuple[float, float]
) -> dict[str, Any]:
    """Everything a converted or generated workload derives from."""
    params: dict[str, Any] = {
        "hdeeprm": __version__,
        "seed": options.seed,
        "nb_jobs": options.nb_jobs,
        "start_job": options.start_job,
        "use_walltime": options.use_walltime,
        "mem_bw_range": list(mem_bw_range),
        "reference_speed": platform.reference_speed,
        "max_cores": len(platform.cores),
    }
    if options.synthetic_workload is not None:
        synth = options.synthetic_workload
        params["synthetic"] = {
            "model": synth.model,
            "nb_jobs": synth.nb_jobs,
            "nb_cores": synth.nb_cores,
        }
    elif options.workload_file_path is not None:
        params["trace_sha256"] = file_sha256(options.workload_file_path)
    if options.gpus_per_task:  # absent when 0: the digests of GPU-less runs are unchanged
        params["gpus_per_task"] = options.gpus_per_task
    return params


def _make_workload(options: Options, platform: Platform, mem_bw_range: tuple[float, float]):
    result = _convert_or_generate(options, platform, mem_bw_range)
    if options.gpus_per_task:  # SWF and Lublin jobs request no GPU: the documented mapping
        for job in result.workload.jobs:
            job.extra["gpus"] = job.res * options.gpus_per_task
    return result


def _convert_or_generate(options: Options, platform: Platform, mem_bw_range: tuple[float, float]):
    nb_cores = len(platform.cores)
    if options.synthetic_workload is not None:
        synth = options.synthetic_workload
        model_cores = min(synth.nb_cores or nb_cores, nb_cores)
        return lublin_workload(
            synth.nb_jobs,
            model_cores,
            options.seed,
            reference_speed=platform.reference_speed,
            mem_bw_range=mem_bw_range,
        )
    if options.workload_file_path is None:
        where = str(options.source) if options.source else "<options>"
        raise InputError(
            "no workload: set workload_file_path to an SWF trace, add synthetic_workload, "
            "or pass a Batsim workload with -cw",
            where,
            "workload_file_path",
        )
    return convert_swf(
        options.workload_file_path,
        reference_speed=platform.reference_speed,
        max_cores=nb_cores,
        seed=options.seed,
        nb_jobs=options.nb_jobs,
        start=options.start_job,
        mem_bw_range=mem_bw_range,
    )
