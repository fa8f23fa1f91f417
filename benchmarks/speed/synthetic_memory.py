"""Peak memory of a classic run against the number of synthetic (Lublin) jobs.

Run: ``python benchmarks/speed/synthetic_memory.py [N1 N2 ...]`` (default: 10,000 and 60,000 jobs).

Each size runs ``hdeeprm-launch`` in a fresh process on the Gaia platform and prints its peak
resident memory; the slope between two sizes is the per-job cost that
``hdeeprm.workload.budget.BYTES_PER_JOB`` rounds up (measured: about 7.3 KB per job over a
260 MB base).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import resource, sys
from hdeeprm.cli.launch import main
try:
    main([sys.argv[1], "-q"])
except SystemExit:
    pass
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def peak(nb_jobs: int, folder: Path) -> int:
    options = {
        "seed": 1,
        "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
        "synthetic_workload": {"model": "lublin", "nb_jobs": nb_jobs, "nb_cores": 1024},
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}},
    }
    folder.mkdir()
    (folder / "options.json").write_text(json.dumps(options))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder / "options.json")],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 60_000], help="job counts")
    sizes = parser.parse_args().sizes
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            rss = peak(n, Path(tmp) / str(n))
            results.append((n, rss))
            print(f"{n:>9,} jobs: peak RSS {rss / 2**20:,.0f} MiB")
    for (n0, r0), (n1, r1) in zip(results, results[1:]):
        print(f"{n0:,} -> {n1:,} jobs: {(r1 - r0) / (n1 - n0) / 1024:.1f} KiB per job")


if __name__ == "__main__":
    main()
