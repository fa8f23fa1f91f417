"""The same Gaia replay in-process and over Batsim's protocol (ZeroMQ + JSON, ``hdeeprm-sim``).

Run: ``python benchmarks/speed/protocol_replay.py [--nb-jobs N] [--decider first-fit|
shortest-high_gflops] [--trace PATH] [--repeat R]``.

Converts the first N usable jobs of the UniLu Gaia trace (``parallel_homogeneous`` profiles)
for the generated Gaia platform (2,280 cores), then replays them with the same decision system:
in-process on the embedded engine; as a Batsim client of an ``hdeeprm-sim`` process (exactly
what ``hdeeprm-launch --simulator batsim --batsim hdeeprm-sim`` does), R times with each
transport, alternated: ``--transport pyzmq`` (libzmq's REQ socket, the server before issue 13)
and ``--transport builtin`` (hdeeprm's own ZMTP, no ZeroMQ I/O thread); and, when a real Batsim
4.x is found (``$HDEEPRM_BATSIM``, PATH, ``~/.cache/hdeeprm-batsim``; ``make batsim``), once on
it. Prints messages, events, wall times, CPU time per message of the server's loop, of the
whole simulator process (Batsim's too) and of the client, beside the bound of a bare REQ/REP
round trip between two Python processes (same message sizes; libzmq's and the built-in REQ
end), the codec's hot-loop costs, and whether the ``out_jobs.csv`` files are identical.

Deciders: ``first-fit`` is FCFS on the lowest free host ids with every host switched to P0 at
the start; ``shortest-high_gflops`` is hdeeprm's workload manager with that classic policy pair
(P-states managed per job, so about twice as many messages).
"""

from __future__ import annotations

import argparse
import math
import re
import resource
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.protocol import BatsimSimulation
from hdeeprm.protocol.client import default_batsim, find_executable
from hdeeprm.protocol.codec import (
    EventEncoder,
    decode_decisions,
    dumps,
    encode_decisions,
    loads,
    read_reply,
    reply_time,
)
from hdeeprm.protocol.errors import BatsimNotFoundError
from hdeeprm.protocol.transport import open_requester
from hdeeprm.simulation import (
    SIMULATION_BEGINS,
    SIMULATION_ENDS,
    Decision,
    Engine,
    FirstFitFCFS,
    Message,
    SetResourceState,
    load_platform_xml,
)
from hdeeprm.simulation.outputs import jobs_csv
from hdeeprm.workload import convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GAIA_JSON = ROOT / "platform_examples" / "gaia.json"
GAIA_SWF = common.trace_default(common.GAIA)


class AllP0FCFS(FirstFitFCFS):
    """First-fit FCFS with every host switched to P0 once, at the start."""

    def handle(self, message: Message) -> list[Decision]:
        decisions = super().handle(message)
        if message.events and message.events[0].type == SIMULATION_BEGINS:
            decisions.append(SetResourceState(range(message.events[0].data["nb_resources"]), 0))
        return decisions


def make_decider(name: str, hierarchy):  # noqa: ANN001, ANN201 (benchmark helper)
    """A fresh decision system (each replay needs its own state)."""
    if name == "first-fit":
        return AllP0FCFS()
    from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager

    actions = ActionSpace()
    return WorkloadManager(hierarchy, actions, FixedPair(actions, name), seed=1)


def sim_executable(folder: Path) -> str:
    """``hdeeprm-sim`` from PATH, else a wrapper running it from this source tree."""
    found = shutil.which("hdeeprm-sim")
    if found:
        return found
    wrapper = folder / "hdeeprm-sim"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hdeeprm.cli.sim "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


ECHO = """
import sys, time, zmq
ctx = zmq.Context(); sock = ctx.socket(zmq.REP); sock.bind(sys.argv[1])
reply = b"x" * int(sys.argv[2])
cpu = 0.0
while True:
    msg = sock.recv()
    if msg == b"start":
        cpu = time.process_time()
        sock.send(b""); continue
    if msg == b"stop":
        sock.send(repr(time.process_time() - cpu).encode()); break
    sock.send(reply)
"""


@dataclass(frozen=True)
class RoundTrip:
    """Cost of one bare REQ/REP round trip (seconds): wall time, and the CPU time of each
    process (REQ side: the simulator's place; REP side: the scheduler's)."""

    wall: float
    req_cpu: float
    rep_cpu: float


def bare_round_trip(
    request_size: int, reply_size: int, count: int = 5000, *, builtin: bool = False
) -> RoundTrip:
    """A REQ/REP round trip with a Python REP process that does nothing; the REQ end is
    libzmq's, or with ``builtin`` hdeeprm-sim's own (:mod:`hdeeprm.protocol.zmtp`)."""
    import subprocess

    port = free_port()
    endpoint = f"tcp://127.0.0.1:{port}"
    peer = subprocess.Popen([sys.executable, "-c", ECHO, endpoint, str(reply_size)])
    sock = open_requester(
        endpoint, 10.0, peer="the echo process", transport="builtin" if builtin else "pyzmq"
    )
    payload = b"y" * request_size
    for _ in range(200):  # warm up (libzmq's connection is made on the way)
        sock.send(payload)
        sock.recv()
    sock.send(b"start")
    sock.recv()
    tick = time.perf_counter()
    cpu = time.process_time()
    for _ in range(count):
        sock.send(payload)
        sock.recv()
    elapsed = time.perf_counter() - tick
    req_cpu = time.process_time() - cpu
    sock.send(b"stop")
    rep_cpu = float(sock.recv())
    peer.wait(10)
    sock.close()
    return RoundTrip(elapsed / count, req_cpu / count, rep_cpu / count)


def best_round_trips(
    request_size: int, reply_size: int, rounds: int = 3
) -> tuple[RoundTrip, RoundTrip]:
    """:func:`bare_round_trip` with libzmq's and the built-in REQ end, alternated, each the
    run of least REQ-side CPU of ``rounds``."""
    runs: dict[bool, list[RoundTrip]] = {False: [], True: []}
    for _ in range(rounds):
        for builtin in runs:
            runs[builtin].append(bare_round_trip(request_size, reply_size, builtin=builtin))
    best = {b: min(r, key=lambda trip: trip.req_cpu) for b, r in runs.items()}
    return best[False], best[True]


def server_codec_costs(
    sent: list[Message], replies: list[bytes], rounds: int = 3
) -> tuple[float, float, float, float]:
    """CPU seconds per message of the server's codec on the replay's own messages, best of
    ``rounds``: writing each message the general way (``dumps(encode())``) and as served
    (``encode_bytes``), reading each reply the general way and as served (empty replies and
    well-formed EXECUTE_JOBs without ``json.loads``' and the checks' overheads)."""
    encoder = EventEncoder()
    clock = time.process_time
    best = [math.inf] * 4

    def general_read(raw: bytes) -> None:
        reply = loads(raw, "reply 1")
        stamps: list[float] = []
        decode_decisions(reply, where="reply 1", ignored=[], stamps=stamps)
        reply_time(reply, stamps, "reply 1")

    def served_read(raw: bytes) -> None:
        read_reply(raw, "reply 1", [])

    jobs = (
        (lambda: [dumps(encoder.encode(m)) for m in sent], len(sent)),
        (lambda: [encoder.encode_bytes(m) for m in sent], len(sent)),
        (lambda: [general_read(r) for r in replies], len(replies)),
        (lambda: [served_read(r) for r in replies], len(replies)),
    )
    for _ in range(rounds):
        for index, (job, count) in enumerate(jobs):
            tick = clock()
            job()
            best[index] = min(best[index], (clock() - tick) / max(count, 1) * 1e6)
    return best[0], best[1], best[2], best[3]


def replay(sim: BatsimSimulation, decider) -> tuple[float, float]:  # noqa: ANN001
    """Drive ``sim`` with ``decider`` to the end; return the exchange's wall and CPU time
    (this process: the decider and the client's codec)."""
    tick = time.perf_counter()
    cpu = time.process_time()
    message = sim.start()
    while True:
        decisions = decider.handle(message)
        if message.events and message.events[-1].type == SIMULATION_ENDS:
            break
        message = sim.proceed(decisions)
    exchange = time.perf_counter() - tick
    cpu = time.process_time() - cpu
    sim.close()
    return exchange, cpu


@dataclass(frozen=True)
class Served:
    """One replay through ``hdeeprm-sim`` (or Batsim): times in seconds."""

    messages: int
    #: Client side: the exchange's wall time and this process's CPU time (decider + codec).
    exchange: float
    client_cpu: float
    #: The server's own serving loop, CPU (from hdeeprm-sim's summary line; nan for Batsim).
    server_cpu: float
    #: The whole simulator process's CPU (start, inputs, serving, outputs): getrusage.
    process_cpu: float
    jobs_csv: str


def children_cpu() -> float:
    """User + system CPU seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def serve_replay(
    folder: Path,
    name: str,
    executable: str,
    args: Sequence[str],
    decider,  # noqa: ANN001
    xml_path: Path,
    workload_path: Path,
) -> Served:
    """Replay through ``executable`` (hdeeprm-sim or Batsim) with ``decider``."""
    log = folder / f"{name}.log"
    sim = BatsimSimulation(
        xml_path,
        [workload_path],
        folder / name / "out",
        executable=executable,
        timeout=600,
        extra_args=args,
        log_path=log,
    )
    before = children_cpu()
    exchange, client_cpu = replay(sim, decider)
    process_cpu = children_cpu() - before
    served = re.search(r"messages in [0-9.]+ s \(CPU ([0-9.]+) s\)", log.read_text())
    server_cpu = float(served.group(1)) if served else math.nan
    jobs = (folder / name / "out_jobs.csv").read_text()
    return Served(sim.nb_messages, exchange, client_cpu, server_cpu, process_cpu, jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=GAIA_SWF, help="SWF trace to replay")
    parser.add_argument("--nb-jobs", type=int, default=10_000, help="usable jobs to replay")
    parser.add_argument(
        "--decider", default="first-fit", choices=["first-fit", "shortest-high_gflops"]
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="hdeeprm-sim runs per transport (alternated)"
    )
    args = parser.parse_args()
    args.trace = common.require_trace(args.trace)

    # The bound first, in a small process (later, the replays' heap makes the collector's
    # passes part of what is measured); best of three alternated runs.
    bare_zmq, bare_builtin = best_round_trips(1200, 300)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        hierarchy = load_platform(GAIA_JSON)
        xml_path = folder / "platform.xml"
        write_platform_xml(hierarchy, xml_path)
        platform = load_platform_xml(xml_path)
        conversion = convert_swf(
            args.trace,
            reference_speed=hierarchy.reference_speed,
            max_cores=platform.nb_hosts,
            seed=1,
            nb_jobs=args.nb_jobs,
        )
        workload = conversion.workload
        workload_path = folder / "workload.json"
        workload.save(workload_path)
        print(
            f"Gaia: {platform.nb_hosts} hosts, {len(workload.jobs)} jobs "
            f"(parallel_homogeneous), decider {args.decider}"
        )

        # --- in-process ---
        engine = Engine(platform, workload)
        decider = make_decider(args.decider, hierarchy)
        tick = time.perf_counter()
        in_cpu = time.process_time()
        message = engine.start()
        sent: list[Message] = []
        answers: list[tuple[float, list[Decision]]] = []
        while True:
            decisions = decider.handle(message)
            sent.append(message)
            if engine.finished:
                break
            answers.append((message.now, decisions))
            message = engine.proceed(decisions)
        in_process = time.perf_counter() - tick
        in_cpu = time.process_time() - in_cpu
        replies = [dumps(encode_decisions(now, answer)) for now, answer in answers]
        codec = server_codec_costs(sent, replies)
        messages, events = engine.nb_messages, engine.nb_events
        reference = jobs_csv(engine)

        # --- over the protocol: libzmq's REQ socket (before) and the built-in one (after) ---
        executable = sim_executable(folder)
        runs: dict[str, list[Served]] = {"pyzmq": [], "builtin": []}
        for index in range(args.repeat):
            for transport in runs:
                runs[transport].append(
                    serve_replay(
                        folder,
                        f"sim-{transport}-{index}",
                        executable,
                        ["--transport", transport],
                        make_decider(args.decider, hierarchy),
                        xml_path,
                        workload_path,
                    )
                )

        # --- on a real Batsim, if there is one ---
        batsim: Served | None = None
        try:
            batsim_exe = find_executable(default_batsim())
        except BatsimNotFoundError:
            batsim_exe = None
        if batsim_exe is not None:
            batsim = serve_replay(
                folder,
                "batsim",
                batsim_exe,
                [],
                make_decider(args.decider, hierarchy),
                xml_path,
                workload_path,
            )

    # Wall time (noise on a shared machine: mostly waiting for a core).
    print(f"{'':34} {'messages':>9} {'events':>9} {'wall s':>8} {'us/message':>11}")
    print(
        f"{'in-process':34} {messages:>9} {events:>9} {in_process:>8.2f} "
        f"{in_process / messages * 1e6:>11.1f}"
    )
    for transport, served_runs in runs.items():
        for served in served_runs:
            print(
                f"{'hdeeprm-sim --transport ' + transport:34} {served.messages:>9} {events:>9} "
                f"{served.exchange:>8.2f} {served.exchange / served.messages * 1e6:>11.1f}"
            )
    if batsim is not None:
        print(
            f"{'Batsim 4.2.1':34} {batsim.messages:>9} {'':>9} {batsim.exchange:>8.2f} "
            f"{batsim.exchange / batsim.messages * 1e6:>11.1f}"
        )
    else:
        print("Batsim: not found (make batsim, or set HDEEPRM_BATSIM)")
    print(
        f"bare round trip (Python REQ <-> Python REP), wall: libzmq REQ {bare_zmq.wall * 1e6:.1f}"
        f" us, built-in REQ {bare_builtin.wall * 1e6:.1f} us"
    )

    # CPU time: what to judge by on a shared machine. The in-process replay does the work of
    # both sides with no protocol.
    print("CPU time per message, us (process_time / getrusage, all threads):")
    print(f"  in-process (engine + decider, both sides' work):  {in_cpu / messages * 1e6:7.1f}")
    print(
        f"  bare REQ side (best of 3): libzmq {bare_zmq.req_cpu * 1e6:.1f}, built-in "
        f"{bare_builtin.req_cpu * 1e6:.1f}   (bare REP side {bare_zmq.rep_cpu * 1e6:.1f})"
    )
    print(f"  {'':32} {'server loop':>11} {'sim process':>11} {'client':>8}")
    labels = {"pyzmq": "before: --transport pyzmq", "builtin": "after: --transport builtin"}
    for transport, served_runs in runs.items():
        for served in served_runs:
            per = 1e6 / served.messages
            print(
                f"  hdeeprm-sim {labels[transport]:26} {served.server_cpu * per:>11.1f} "
                f"{served.process_cpu * per:>11.1f} {served.client_cpu * per:>8.1f}"
            )
    if batsim is not None:
        per = 1e6 / batsim.messages
        print(
            f"  {'Batsim 4.2.1 (its own process)':38} {'':>5} {batsim.process_cpu * per:>11.1f} "
            f"{batsim.client_cpu * per:>8.1f}"
        )
    best = {t: min(r.server_cpu for r in served_runs) for t, served_runs in runs.items()}
    print(
        f"  server loop, best run: before {best['pyzmq'] / messages * 1e6:.1f}, after "
        f"{best['builtin'] / messages * 1e6:.1f} (bound: bare REQ side, libzmq "
        f"{bare_zmq.req_cpu * 1e6:.1f})"
    )
    print(
        "server codec per message, us of CPU (hot loop over the same messages, no sockets):\n"
        f"  writing a message: dumps(encode()) {codec[0]:.2f}, encode_bytes() {codec[1]:.2f}\n"
        f"  reading a reply:   loads() + decode_decisions() {codec[2]:.2f}, "
        f"read_reply() (as served) {codec[3]:.2f}"
    )
    same = all(r.jobs_csv == reference for served_runs in runs.values() for r in served_runs)
    print(f"identical out_jobs.csv (in-process, every hdeeprm-sim run): {'yes' if same else 'NO'}")
    if batsim is not None:
        batsim_rows = len(batsim.jobs_csv.splitlines()) - 1
        print(f"Batsim wrote every job: {'yes' if batsim_rows == len(workload.jobs) else 'NO'}")


if __name__ == "__main__":
    main()
