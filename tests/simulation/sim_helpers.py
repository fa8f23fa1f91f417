"""Small platforms and workloads built in code for the engine tests (a helper module)."""

from __future__ import annotations

from collections.abc import Sequence

from hdeeprm.simulation import Engine, Message, SimPlatform
from hdeeprm.workload.model import JobSpec, Profile, Workload

GF = 1e9
#: Thesis 4.1.4 core: 1 GFLOPS in P0, 75 % in P1, idle in P2/P3 (the generator writes 1e-6
#: GFLOPS there, which the engine treats as 0). A 200 W dual-core processor: 100 W per core,
#: times 100 %, 100 %, 25 %, 5 % in P0..P3, idle and computing alike.
THESIS_SPEEDS = (1 * GF, 0.75 * GF, 1e-6 * GF, 1e-6 * GF)
THESIS_WATTS = (100.0, 100.0, 25.0, 5.0)


def thesis_platform(nb_cores: int = 2, pstate: int = 3) -> SimPlatform:
    return SimPlatform.homogeneous(
        nb_cores, THESIS_SPEEDS, THESIS_WATTS, THESIS_WATTS, pstate=pstate, name_format="cor_{}"
    )


def workload(*jobs: tuple, name: str = "w0") -> Workload:
    """Jobs as ``(id, subtime, res, profile_type, amount[, walltime])``.

    ``amount`` is seconds for ``delay`` and flops for the ``parallel_homogeneous*`` types.
    """
    specs, profiles = [], {}
    for job in jobs:
        jid, subtime, res, ptype, amount = job[:5]
        walltime = job[5] if len(job) > 5 else None
        if ptype == "delay":
            profiles[jid] = Profile(jid, ptype, delay=amount)
        else:
            profiles[jid] = Profile(jid, ptype, cpu=amount)
        specs.append(JobSpec(jid, float(subtime), res, jid, walltime))
    return Workload(0, specs, profiles, name)


def types(message: Message) -> list[str]:
    return [event.type for event in message.events]


def drain(engine: Engine, decisions: Sequence = ()) -> list[Message]:
    """Proceed with ``decisions`` once, then with no decisions until the end."""
    messages = [engine.proceed(decisions)]
    while not engine.finished:
        messages.append(engine.proceed([]))
    return messages
