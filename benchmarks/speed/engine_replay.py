"""Replay the whole UniLu Gaia trace on the Gaia platform with the first-fit FCFS scheduler.

Run: ``python benchmarks/speed/engine_replay.py [--profile-type delay|parallel_homogeneous]
[--trace PATH] [--no-outputs] [--cprofile]``.

Prints the time to load the platform.xml (2,281 hosts) and to convert the trace, then for the
first 10k, 25k and all usable jobs: simulated events, messages, CPU time of the replay
(``time.process_time``: engine + scheduler, every host in P0; wall time on a shared machine
measures the other processes too), events/s, jobs/s and the cost per event in
microseconds (a flat figure means the engine scales linearly); then the time to write the
five output files, the full replay without tracing, the full replay with HDeepRM-style
P-state management (a SetResourceState per job start and end), and the process's peak
memory (RSS).

Reference point: Batsim 4.2.1 + pybatsim's EASY backfilling replays the same trace (51,767
usable jobs, delay profiles, 2,004 homogeneous hosts) in about 25 s and 400 MiB.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.simulation import (
    JOB_COMPLETED,
    SIMULATION_BEGINS,
    Decision,
    Engine,
    ExecuteJob,
    FirstFitFCFS,
    Message,
    SetResourceState,
    load_platform_xml,
    run,
    write_outputs,
)
from hdeeprm.workload import Workload, convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GAIA_JSON = ROOT / "platform_examples" / "gaia.json"
GAIA_SWF = common.trace_default(common.GAIA)


def window(workload: Workload, nb_jobs: int) -> Workload:
    """The first ``nb_jobs`` jobs of ``workload`` (profiles shared, not copied)."""
    return Workload(workload.nb_res, workload.jobs[:nb_jobs], workload.profiles, workload.name)


class AllP0FCFS(FirstFitFCFS):
    """First-fit FCFS on hosts all switched to P0 once at the start (they start in P3, idle,
    where a computing job would stall)."""

    def handle(self, message: Message) -> list[Decision]:
        decisions = super().handle(message)
        if message.events[0].type == SIMULATION_BEGINS:
            decisions.append(SetResourceState(range(message.events[0].data["nb_resources"]), 0))
        return decisions


class PStateFCFS(FirstFitFCFS):
    """First-fit FCFS that also manages P-states the way HDeepRM's workload manager does:
    P0 for a job's hosts when it starts, P3 when it ends, each change confirmed by a
    RESOURCE_STATE_CHANGED message (so about twice as many messages)."""

    def handle(self, message: Message) -> list[Decision]:
        decisions = super().handle(message)
        extra: list[Decision] = [
            SetResourceState(event.data["alloc"], 3)
            for event in message.events
            if event.type == JOB_COMPLETED
        ]
        for decision in decisions:
            if isinstance(decision, ExecuteJob):
                extra.append(SetResourceState(decision.alloc, 0))
        return decisions + extra


def replay(
    platform_xml: Path, workload: Workload, *, trace: bool, pstates: bool = False
) -> tuple[Engine, float]:
    platform = load_platform_xml(platform_xml)
    engine = Engine(platform, workload, trace=trace)
    start = time.process_time()
    run(engine, PStateFCFS() if pstates else AllP0FCFS())
    return engine, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=GAIA_SWF, help="SWF trace to replay")
    parser.add_argument(
        "--profile-type", default="delay", choices=["delay", "parallel_homogeneous"]
    )
    parser.add_argument("--no-outputs", action="store_true", help="skip writing out_*.csv")
    parser.add_argument("--cprofile", action="store_true", help="profile the full replay")
    args = parser.parse_args()
    args.trace = common.require_trace(args.trace)

    with tempfile.TemporaryDirectory() as tmp:
        xml_path = Path(tmp) / "platform.xml"
        hierarchy = load_platform(GAIA_JSON)
        write_platform_xml(hierarchy, xml_path)
        tick = time.process_time()
        platform = load_platform_xml(xml_path)
        print(
            f"platform.xml load: {platform.nb_hosts} compute hosts in "
            f"{(time.process_time() - tick) * 1e3:.1f} ms"
        )

        tick = time.process_time()
        conversion = convert_swf(
            args.trace,
            reference_speed=hierarchy.reference_speed,
            max_cores=platform.nb_hosts,
            seed=1,
            profile_type=args.profile_type,
        )
        workload = conversion.workload
        print(
            f"trace conversion: {len(workload.jobs)} usable jobs ({args.profile_type}) in "
            f"{time.process_time() - tick:.2f} s"
        )

        print(
            f"{'jobs':>7} {'events':>8} {'messages':>9} {'CPU s':>9} {'events/s':>10} "
            f"{'jobs/s':>9} {'us/event':>9}"
        )
        engine = None
        for size in (10_000, 25_000, len(workload.jobs)):
            engine, cpu = replay(xml_path, window(workload, size), trace=True)
            print(
                f"{size:>7} {engine.nb_events:>8} {engine.nb_messages:>9} {cpu:>9.2f} "
                f"{engine.nb_events / cpu:>10.0f} {size / cpu:>9.0f} "
                f"{cpu / engine.nb_events * 1e6:>9.2f}"
            )
        assert engine is not None
        print(
            f"simulated makespan {max(j.finish_time or 0 for j in engine.finished_jobs):.0f} s, "
            f"energy {engine.consumed_energy / 3.6e9:.3f} MWh"
        )
        if not args.no_outputs:
            tick = time.process_time()
            paths = write_outputs(engine, Path(tmp) / "out")
            sizes = sum(p.stat().st_size for p in paths.values()) / 2**20
            print(f"output writing: 5 files, {sizes:.1f} MiB in {time.process_time() - tick:.2f} s")
        del engine
        _, cpu = replay(xml_path, workload, trace=False)
        print(f"full replay without tracing (no outputs): {cpu:.2f} s")
        pstate_engine, cpu = replay(xml_path, workload, trace=True, pstates=True)
        print(
            f"full replay with P-state management: {pstate_engine.nb_grouped_switches} "
            f"SetResourceState, {pstate_engine.nb_events} events, "
            f"{pstate_engine.nb_messages} messages in {cpu:.2f} s "
            f"({cpu / pstate_engine.nb_events * 1e6:.2f} us/event)"
        )
        del pstate_engine

        if args.cprofile:
            profiler = cProfile.Profile()
            profiler.enable()
            replay(xml_path, workload, trace=True)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    print(f"peak memory (RSS): {common.peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
