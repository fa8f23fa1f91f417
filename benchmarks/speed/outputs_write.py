"""CPU time of writing the Batsim output files of one classic replay, optionally against another
version of ``hdeeprm/simulation/outputs.py`` on the very same engine.

Usage: ``python benchmarks/speed/outputs_write.py [--trace ricc] [--size 10000|all] [--rounds 3]
[--compare OLD_OUTPUTS_PY] [--traces-dir DIR]``

The trace (``ricc``, ``lcg`` or ``gaia`` of ``benchmarks/speed/scaling.py``) is converted and
replayed once with ``shortest-high_gflops``; then ``write_outputs`` runs ``--rounds`` times
into a temporary folder, alternating with the ``write_outputs`` of ``--compare`` (a copy of an
older ``outputs.py``, e.g. ``git show e432146:hdeeprm/simulation/outputs.py >
/tmp/old_outputs.py``) when given. Printed: the CPU seconds of each round (``time.process_time``,
so a busy machine inflates them less than wall time), and whether both versions wrote the same
bytes (SHA-256 of every file).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import logging
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling import DEFAULT_TRACES, ROOT, TRACES, trace_file  # noqa: E402


def load_module(path: Path) -> ModuleType:
    """Import a standalone copy of ``outputs.py`` under its own name."""
    spec = importlib.util.spec_from_file_location("compared_outputs", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="ricc", choices=sorted(TRACES))
    parser.add_argument("--size", default="10000", help="first N usable jobs, or all")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", type=Path, default=None)
    parser.add_argument("--traces-dir", type=Path, default=DEFAULT_TRACES)
    args = parser.parse_args(argv)

    from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
    from hdeeprm.platform import load_platform, write_platform_xml
    from hdeeprm.simulation import Engine, load_platform_xml, outputs, run
    from hdeeprm.workload.convert import convert_swf

    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    versions: dict[str, ModuleType] = {"this": outputs}
    if args.compare is not None:
        versions = {"compared": load_module(args.compare), **versions}
    platform_file = TRACES[args.trace][1]
    swf = trace_file(args.trace, args.traces_dir)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        platform = load_platform(ROOT / "platform_examples" / platform_file)
        write_platform_xml(platform, out / "platform.xml")
        workload = convert_swf(
            swf,
            reference_speed=platform.reference_speed,
            max_cores=len(platform.cores),
            seed=1,
            nb_jobs=None if args.size == "all" else int(args.size),
        ).workload
        actions = ActionSpace()
        manager = WorkloadManager(
            platform, actions, FixedPair(actions, "shortest-high_gflops"), seed=1
        )
        engine = Engine(load_platform_xml(out / "platform.xml"), workload)
        run(engine, manager)
        print(f"{args.trace} {args.size}: {len(engine.finished_jobs)} jobs")
        digests: dict[str, dict[str, str]] = {}
        for round_ in range(args.rounds):
            for name, module in versions.items():
                start = time.process_time()
                paths = module.write_outputs(engine, out / name)
                cpu = time.process_time() - start
                print(f"round {round_ + 1} {name}: {cpu:.2f} s CPU", flush=True)
                digests[name] = {
                    kind: hashlib.sha256(path.read_bytes()).hexdigest()
                    for kind, path in paths.items()
                }
    if len(digests) > 1:
        same = digests["compared"] == digests["this"]
        print("same bytes in every file" if same else "FILES DIFFER")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
