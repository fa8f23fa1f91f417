"""Instructions of a classic Gaia replay alone, for callgrind (a count the load cannot move).

Usage::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=starmap_next --callgrind-out-file=/tmp/classic.cg \\
        python3.11 benchmarks/speed/classic_instructions.py [--pair PAIR] [--nb-jobs N]
        [--trace PATH] [--platform NAME] [--scheduler NAME]
    grep '^summary' /tmp/classic.cg

The first N jobs of the Gaia trace (default 20,000; 0: all) converted as
``benchmarks/speed/scaling.py --gaia-ratio`` does, on the Gaia platform, replayed once by the
workload manager with a fixed policy pair (default ``shortest-high_gflops``) and a traced
engine. ``--trace`` and ``--platform`` (a name of ``platform_examples``, default ``gaia``)
count another trace, ``--scheduler`` (e.g. ``easy``) a backfilling scheduler choosing the
jobs (RICC with EASY: ``--trace RICC-2010-2.swf.gz --platform ricc
--scheduler easy``). The replay runs inside ``itertools.starmap``, so that callgrind, told
to collect only inside CPython's ``starmap_next``, counts it and nothing of the set-up (the
same method as ``benchmarks/speed/env_instructions.py``). Use the python binary itself, not a pyenv
shim. Without valgrind it simply runs the replay and prints the number of jobs.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import sys
import tempfile
from pathlib import Path

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.simulation import Engine, load_platform_xml, run
from hdeeprm.workload.convert import convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", default="shortest-high_gflops", help="the fixed policy pair")
    parser.add_argument("--nb-jobs", type=int, default=20000, help="first N jobs (0: all)")
    parser.add_argument("--trace", type=Path, default=TRACE, help="the SWF trace")
    parser.add_argument("--platform", default="gaia", help="a platform_examples name")
    parser.add_argument("--scheduler", default=None, help="a backfilling scheduler preset")
    args = parser.parse_args()
    args.trace = common.require_trace(args.trace)
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    platform = load_platform(REPO / "platform_examples" / f"{args.platform}.json")
    with tempfile.TemporaryDirectory() as tmp:
        write_platform_xml(platform, Path(tmp) / "platform.xml")
        sim_platform = load_platform_xml(Path(tmp) / "platform.xml")
    workload = convert_swf(
        args.trace,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
        nb_jobs=args.nb_jobs or None,
    ).workload

    def replay() -> int:
        actions = ActionSpace()
        sched = BackfillScheduler(parse_scheduler(args.scheduler)) if args.scheduler else None
        manager = WorkloadManager(
            platform, actions, FixedPair(actions, args.pair), seed=1, scheduler=sched
        )
        # As hdeeprm-launch's classic runs: outputs only, no per-host energies.
        run(Engine(sim_platform, workload, trace=True, host_energies=False), manager)
        return len(workload.jobs)

    # The only starmap of the run: callgrind collects inside it.
    (jobs,) = itertools.starmap(replay, [()])
    print(f"{jobs} jobs replayed with {args.pair}")


if __name__ == "__main__":
    main()
