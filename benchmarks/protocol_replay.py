"""The same Gaia replay in-process and over Batsim's protocol (ZeroMQ + JSON, ``hdeeprm-sim``).

Run: ``python benchmarks/protocol_replay.py [--nb-jobs N] [--decider first-fit|
shortest-high_gflops] [--trace PATH]``.

Converts the first N usable jobs of the UniLu Gaia trace (``parallel_homogeneous`` profiles)
for the generated Gaia platform (2,280 cores), then replays them twice with the same decision
system: in-process on the embedded engine, and as a Batsim client of an ``hdeeprm-sim``
process (exactly what ``hdeeprm-launch --simulator batsim --batsim hdeeprm-sim`` does), and,
when a real Batsim 4.x is found (``$HDEEPRM_BATSIM``, PATH, ``~/.cache/hdeeprm-batsim``; ``make
batsim``), a third time on it. Prints messages, events, the wall times, the cost per message
beside the bound of a bare ZeroMQ round trip between two Python processes (same message
sizes), and whether the ``out_jobs.csv`` files are identical.

Deciders: ``first-fit`` is FCFS on the lowest free host ids with every host switched to P0 at
the start; ``shortest-high_gflops`` is hdeeprm's workload manager with that classic policy pair
(P-states managed per job, so about twice as many messages).
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.protocol import BatsimSimulation
from hdeeprm.protocol.client import default_batsim, find_executable
from hdeeprm.protocol.codec import (
    EventEncoder,
    decode_decisions,
    dumps,
    empty_reply_now,
    encode_decisions,
    loads,
)
from hdeeprm.protocol.errors import BatsimNotFoundError
from hdeeprm.protocol.server import reply_time
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

ROOT = Path(__file__).resolve().parent.parent
GAIA_JSON = ROOT / "platform_examples" / "gaia.json"
GAIA_SWF = ROOT.parent / "shared" / "traces" / "UniLu-Gaia-2014-1.swf.gz"


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
    from hdeeprm.agents import ClassicAgent
    from hdeeprm.decision import ActionSpace, WorkloadManager

    actions = ActionSpace()
    return WorkloadManager(hierarchy, actions, ClassicAgent(actions, name), seed=1)


def sim_executable(folder: Path) -> str:
    """``hdeeprm-sim`` from PATH, else a wrapper running it from this source tree."""
    found = shutil.which("hdeeprm-sim")
    if found:
        return found
    wrapper = folder / "hdeeprm-sim"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hdeeprm.cli.sim "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


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


def bare_round_trip(request_size: int, reply_size: int, count: int = 5000) -> RoundTrip:
    """A REQ/REP round trip with a Python REP process that does nothing."""
    import subprocess

    import zmq

    context = zmq.Context()
    sock = context.socket(zmq.REQ)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    sock.close()
    endpoint = f"tcp://127.0.0.1:{port}"
    peer = subprocess.Popen([sys.executable, "-c", ECHO, endpoint, str(reply_size)])
    sock = context.socket(zmq.REQ)
    sock.connect(endpoint)
    payload = b"y" * request_size
    for _ in range(200):  # warm up
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
    context.term()
    return RoundTrip(elapsed / count, req_cpu / count, rep_cpu / count)


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
        if empty_reply_now(raw) is None:
            general_read(raw)

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=GAIA_SWF, help="SWF trace to replay")
    parser.add_argument("--nb-jobs", type=int, default=10_000, help="usable jobs to replay")
    parser.add_argument(
        "--decider", default="first-fit", choices=["first-fit", "shortest-high_gflops"]
    )
    args = parser.parse_args()
    if not args.trace.is_file():
        sys.exit(f"trace not found: {args.trace}")

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

        # --- over the protocol ---
        decider = make_decider(args.decider, hierarchy)
        log = folder / "sim.log"
        sim = BatsimSimulation(
            xml_path,
            [workload_path],
            folder / "remote" / "out",
            executable=sim_executable(folder),
            timeout=120,
            log_path=log,
        )
        tick = time.perf_counter()
        exchange, client_cpu = replay(sim, decider)
        total = time.perf_counter() - tick
        served = re.search(r"messages in ([0-9.]+) s \(CPU ([0-9.]+) s\)", log.read_text())
        server_side = float(served.group(1)) if served else float("nan")
        server_cpu = float(served.group(2)) if served else float("nan")

        same = (folder / "remote" / "out_jobs.csv").read_text() == jobs_csv(engine)

        # --- on a real Batsim, if there is one ---
        batsim_line = "Batsim: not found (make batsim, or set HDEEPRM_BATSIM)"
        batsim_same = None
        try:
            batsim_exe = find_executable(default_batsim())
        except BatsimNotFoundError:
            batsim_exe = None
        if batsim_exe is not None:
            real = BatsimSimulation(
                xml_path,
                [workload_path],
                folder / "batsim" / "out",
                executable=batsim_exe,
                timeout=600,
                log_path=folder / "batsim.log",
            )
            tick = time.perf_counter()
            batsim_exchange, _ = replay(real, make_decider(args.decider, hierarchy))
            batsim_total = time.perf_counter() - tick
            batsim_line = (
                f"{'Batsim 4.2.1 (client side)':24} {real.nb_messages:>9} {'':>9} "
                f"{batsim_exchange:>8.2f} {batsim_exchange / real.nb_messages * 1e6:>11.1f}"
                f"   (incl. start and outputs {batsim_total:.2f} s)"
            )
            batsim_jobs = (folder / "batsim" / "out_jobs.csv").read_text().splitlines()
            batsim_same = len(batsim_jobs) == len(workload.jobs) + 1

        bare = bare_round_trip(1200, 300)
        print(f"{'':24} {'messages':>9} {'events':>9} {'wall s':>8} {'us/message':>11}")
        print(
            f"{'in-process':24} {messages:>9} {events:>9} {in_process:>8.2f} "
            f"{in_process / messages * 1e6:>11.1f}"
        )
        print(
            f"{'hdeeprm-sim (client side)':24} {sim.nb_messages:>9} {events:>9} {exchange:>8.2f} "
            f"{exchange / sim.nb_messages * 1e6:>11.1f}"
        )
        print(batsim_line)
        print(f"bare ZeroMQ round trip (Python REQ <-> Python REP): {bare.wall * 1e6:.1f} us")
        print(f"hdeeprm-sim run incl. process start and outputs: {total:.2f} s")
        print(f"hdeeprm-sim's own serving time: {server_side:.2f} s")
        overhead = (exchange - in_process) / messages
        print(
            f"protocol overhead: {overhead * 1e6:.1f} us/message (bound {bare.wall * 1e6:.1f}), "
            f"x{exchange / in_process:.1f} the in-process replay"
        )
        # CPU time: what to judge by on a shared machine (wall time there is mostly waiting
        # for a core). The in-process replay does the work of both sides with no protocol.
        per = 1e6 / messages
        bare_cpu = bare.req_cpu + bare.rep_cpu
        print("CPU time per message, us (process_time, all threads incl. ZeroMQ's I/O thread):")
        print(
            f"  in-process (engine + decider):            {in_cpu * per:>7.1f}\n"
            f"  hdeeprm-sim server (engine + codec + zmq): {server_cpu * per:>7.1f}"
            f"   bare REQ side {bare.req_cpu * 1e6:.1f}\n"
            f"  client (decider + codec + zmq):           {client_cpu * per:>7.1f}"
            f"   bare REP side {bare.rep_cpu * 1e6:.1f}\n"
            f"  both sides beyond in-process and bare:    "
            f"{(server_cpu + client_cpu - in_cpu) * per - bare_cpu * 1e6:>7.1f}"
        )
        print(
            "server codec per message, us of CPU (hot loop over the same messages, no sockets):\n"
            f"  writing a message: dumps(encode()) {codec[0]:.2f}, encode_bytes() {codec[1]:.2f}\n"
            f"  reading a reply:   loads() + decode_decisions() {codec[2]:.2f}, "
            f"with the fast paths (as served) {codec[3]:.2f}"
        )
        print(f"identical out_jobs.csv (in-process, hdeeprm-sim): {'yes' if same else 'NO'}")
        if batsim_same is not None:
            print(f"Batsim wrote every job: {'yes' if batsim_same else 'NO'}")


if __name__ == "__main__":
    main()
