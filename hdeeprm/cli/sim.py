"""``hdeeprm-sim``: the embedded engine with Batsim 4.x's command line and socket protocol.

Existing Batsim schedulers (pybatsim, batsched, ...) run on it without installing Batsim::

    hdeeprm-sim -p platform.xml -w workload.json -e out/run -s tcp://localhost:28000
    pybatsim easyBackfill -s tcp://*:28000          # in another shell

The flags are Batsim's; outputs go to ``{export prefix}_jobs.csv`` etc., as Batsim writes them.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from hdeeprm._gc import heap_frozen
from hdeeprm.cli._report import Command, guarded
from hdeeprm.errors import HDeepRMError, InputError, OutputError
from hdeeprm.protocol.server import DEFAULT_SERVER_TIMEOUT
from hdeeprm.protocol.transport import (
    DEFAULT_ENDPOINT,
    DEFAULT_TRANSPORT,
    TRANSPORTS,
    check_endpoint,
)

VERBOSITY = ("quiet", "network-only", "information", "debug")


def export_location(prefix: str) -> tuple[Path, str]:
    """Batsim's ``-e PREFIX`` as (folder, file-name prefix): ``out/run`` -> (``out``,
    ``run_``), so the files are ``out/run_jobs.csv``..., exactly where Batsim writes them."""
    folder, base = os.path.split(prefix)
    return Path(folder or "."), base + "_"


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.option(
    "-p",
    "--platform",
    "platform_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="SimGrid platform.xml to simulate.",
)
@click.option(
    "-w",
    "--workload",
    "workload_files",
    required=True,
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Batsim workload JSON (repeat for several workloads: w0, w1, ...).",
)
@click.option(
    "-e",
    "--export",
    "export_prefix",
    default="out",
    show_default=True,
    help="Output prefix: writes PREFIX_jobs.csv, PREFIX_schedule.csv, ...",
)
@click.option(
    "-s",
    "--socket-endpoint",
    "endpoint",
    default=DEFAULT_ENDPOINT,
    show_default=True,
    help="The scheduler's socket endpoint, to connect to.",
)
@click.option(
    "-m",
    "--master-host",
    default="master_host",
    show_default=True,
    help="Host of the platform that is not a compute resource.",
)
@click.option(
    "-E",
    "--energy",
    is_flag=True,
    help="Write energy as Batsim -E does (consumed energy, out_pstate_changes.csv, "
    "out_consumed_energy.csv) and accept SET_RESOURCE_STATE. Without it, as Batsim: jobs' "
    "consumed_energy is -1 and P-state changes are refused.",
)
@click.option(
    "--initial-pstate",
    type=click.IntRange(min=0),
    default=None,
    help="Start every compute host in this P-state instead of the platform's (hdeeprm's "
    "platforms start cores in P3, speed 0: give 0 for schedulers that do not manage "
    "P-states, such as pybatsim's).",
)
@click.option(
    "--forward-profiles-on-submission",
    is_flag=True,
    help="Send each job's profile with its JOB_SUBMITTED event.",
)
@click.option(
    "--batsim-timing/--instant",
    default=True,
    help="By default (--batsim-timing, accepted and without effect), each instant's events "
    "are ordered and split into messages, and job times reported, as Batsim 4.2.1 does on "
    "the platform (its internal messages timed over the platform's routes: out_jobs.csv is "
    "Batsim's for schedulers that do not change P-states while jobs run). --instant: one "
    "message per instant, completions first, as the embedded engine hands them to hdeeprm's "
    "decision system in-process.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_SERVER_TIMEOUT,
    show_default=True,
    help="Longest wait for one scheduler reply, in seconds (0: forever).",
)
@click.option(
    "--transport",
    type=click.Choice(TRANSPORTS),
    default=DEFAULT_TRANSPORT,
    show_default=True,
    help="How to speak ZeroMQ to the scheduler: builtin (ZMTP 3.0 over a plain socket, no "
    "ZeroMQ I/O thread: less CPU per message) or pyzmq (libzmq's REQ socket). The scheduler "
    "sees no difference.",
)
@click.option("-v", "--verbosity", type=click.Choice(VERBOSITY), default="information")
@click.option("-q", "--quiet", is_flag=True, help="Shortcut for --verbosity quiet.")
def main(
    platform_file: Path,
    workload_files: tuple[Path, ...],
    export_prefix: str,
    endpoint: str,
    master_host: str,
    energy: bool,
    initial_pstate: int | None,
    forward_profiles_on_submission: bool,
    batsim_timing: bool,
    timeout: float,
    transport: str,
    verbosity: str,
    quiet: bool,
) -> None:
    """Simulate PLATFORM with WORKLOADs for a Batsim 4.x scheduler (JSON over ZeroMQ)."""
    talk = not quiet and verbosity != "quiet"
    try:
        check_endpoint(endpoint, "-s/--socket-endpoint", connect=True)
        summary = serve(
            platform_file,
            workload_files,
            export_prefix,
            endpoint,
            master_host=master_host,
            forward_profiles=forward_profiles_on_submission,
            timeout=timeout,
            energy=energy,
            initial_pstate=initial_pstate,
            batsim_timing=batsim_timing,
            transport=transport,
            freeze_heap=True,
            refuse_batsim_aborts=True,
        )
    except (InputError, OutputError) as exc:  # the user's to fix: exit code 2
        click.echo(f"hdeeprm-sim: error: {exc}", err=True)
        sys.exit(2)
    except HDeepRMError as exc:
        click.echo(f"hdeeprm-sim: error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("\nhdeeprm-sim: interrupted; no output files were written", err=True)
        sys.exit(130)
    if talk:
        click.echo(summary, err=True)


def _batsim_timing(engine, platform_file, master_host: str, energy: bool):  # noqa: ANN001, ANN202
    from hdeeprm.protocol.batsim_timing import BatsimTiming, message_routes

    names = [h.name for h in engine.platform.hosts]
    master = engine.platform.master_host or master_host  # or the host whose role is master
    loopback, routes = message_routes(platform_file, names, master)
    return BatsimTiming(engine, routes, energy=energy, loopback=loopback)


def serve(
    platform_file: str | os.PathLike[str],
    workload_files: tuple[str | os.PathLike[str], ...] | list[str | os.PathLike[str]],
    export_prefix: str,
    endpoint: str = DEFAULT_ENDPOINT,
    *,
    master_host: str = "master_host",
    forward_profiles: bool = False,
    timeout: float | None = DEFAULT_SERVER_TIMEOUT,
    energy: bool = True,
    initial_pstate: int | None = None,
    batsim_timing: bool = True,
    transport: str = DEFAULT_TRANSPORT,
    freeze_heap: bool = False,
    refuse_batsim_aborts: bool = False,
) -> str:
    """Load the inputs, serve the simulation on ``endpoint``, write the outputs; return a
    one-line summary. Input problems raise :class:`InputError` before anything connects.

    ``energy=False`` is Batsim without ``-E`` (see :func:`write_outputs`; P-state changes
    refused); ``initial_pstate`` overrides every host's initial P-state; ``batsim_timing``
    (the default) orders and splits each instant's events into messages as Batsim 4.2.1 does
    (docs/batsim.md), ``False`` is ``--instant``; ``transport`` is how ZeroMQ is spoken
    (``builtin`` or ``pyzmq``, see
    :func:`~hdeeprm.protocol.transport.open_requester`); ``freeze_heap`` keeps everything loaded
    out of the garbage collector's full collections while serving
    (:func:`~hdeeprm._gc.heap_frozen`: for a process that mostly serves, as ``hdeeprm-sim``);
    ``refuse_batsim_aborts`` raises :class:`InputError` on the inputs Batsim aborts on
    (``hdeeprm-sim`` does: :func:`~hdeeprm.protocol.batsim_timing.check_batsim_accepts`)."""
    from hdeeprm._atomic import check_writable
    from hdeeprm._inputfile import check_input_file
    from hdeeprm.protocol.batsim_timing import check_batsim_accepts
    from hdeeprm.protocol.codec import EventEncoder
    from hdeeprm.protocol.server import ProtocolServer
    from hdeeprm.simulation import Engine, load_platform_xml, write_outputs
    from hdeeprm.workload.model import load_workload

    check_input_file(platform_file, "platform file", "-p")
    for path in workload_files:
        check_input_file(path, "workload file", "-w")
    platform = load_platform_xml(platform_file, master_host)
    if initial_pstate is not None:
        platform = platform.with_initial_pstate(initial_pstate, os.fspath(platform_file))
    workloads = [load_workload(path, name=f"w{i}") for i, path in enumerate(workload_files)]
    paths = {wl.name: os.path.abspath(p) for wl, p in zip(workloads, workload_files)}
    folder, prefix = export_location(export_prefix)
    check_writable(folder / f"{prefix}jobs.csv")  # now, not after the whole simulation
    if refuse_batsim_aborts:
        check_batsim_accepts(
            platform_file, platform, platform.master_host or master_host, energy=energy
        )
    engine = Engine(platform, workloads, strict_allocation_size=True)
    timing = _batsim_timing(engine, platform_file, master_host, energy) if batsim_timing else None
    server = ProtocolServer(
        engine,
        endpoint,
        timeout=timeout if timeout else None,
        encoder=EventEncoder(paths, forward_profiles=forward_profiles),
        allow_pstate_changes=energy,
        timing=timing,
        transport=transport,
    )
    # The inputs live until the end: keep the cyclic collector from walking them again and
    # again while serving (its full collections cost ~1.4 us per message on Gaia); they go
    # back to it when serving ends, so an in-process caller's heap is as it was.
    with heap_frozen() if freeze_heap else contextlib.nullcontext():
        stats = server.run()
        if timing is not None:
            timing.report_times()
        write_outputs(engine, folder, prefix, energy=energy)
    makespan = max((job.finish_time or 0.0 for job in engine.finished_jobs), default=0.0)
    return (
        f"hdeeprm-sim: {len(engine.finished_jobs)} jobs, makespan {makespan:g} s, "
        + (f"energy {engine.consumed_energy:g} J, " if energy else "")
        + f"{stats.messages} messages in "
        f"{stats.wall_time:.2f} s (CPU {stats.cpu_time:.2f} s); outputs {folder / prefix}*.csv"
    )


if __name__ == "__main__":  # pragma: no cover
    main()
