"""Sizes of insights.log and the over-subscription CSV after whole-trace classic runs.

Run: ``python benchmarks/speed/log_sizes.py [--traces DIR]``.

Replays the whole UniLu Gaia trace on the Gaia platform (51,771 usable jobs) and the whole
KTH SP2 trace on the KTH platform (28,476 jobs, every node over-subscribed by the default
bandwidth range) with ``shortest-high_gflops`` at log level WARNING, once by default
(repeated warnings aggregated, over-subscription spans merged) and once with
``pybatsim.log_detail`` (every warning, one CSV row per episode). Prints the file sizes and
the number of over-subscription episodes. Each run takes 10-30 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CASES = [
    ("UniLu-Gaia-2014-1.swf.gz", "gaia.json", 2280),
    ("KTH-SP2-1996-2.1-cln.swf.gz", "kth_sp2.json", 100),
]


def run(folder: Path, trace: Path, platform: str, cores: int, detail: bool) -> str:
    options = {
        "seed": 20091995,
        "nb_resources": cores,
        "workload_file_path": str(trace),
        "platform_file_path": str(REPO / "platform_examples" / platform),
        "pybatsim": {
            "log_level": "WARNING",
            "log_detail": detail,
            "env": {"objective": "avg_job_slowdown"},
            "agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"},
        },
    }
    folder.mkdir(parents=True)
    (folder / "options.json").write_text(json.dumps(options))
    done = subprocess.run(
        [sys.executable, "-m", "hdeeprm.cli.launch", str(folder / "options.json"), "-q"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traces", type=Path, default=None, help="folder of the traces (default: hdeeprm-traces)"
    )
    args = parser.parse_args()
    print(f"{'trace':30} {'mode':8} {'episodes':>9} {'insights.log':>14} {'CSV':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, platform, cores in CASES:
            trace = common.find_trace(name, args.traces)
            if trace is None:
                why = f"not in {args.traces}" if args.traces else common.missing_message(name)
                print(f"{name:30} skipped: {why}")
                continue
            for detail in (False, True):
                folder = Path(tmp) / f"{name}-{detail}"
                out = run(folder, trace, platform, cores, detail)
                episodes = out.split("bandwidth")[1].split()[0]
                log = (folder / "insights.log").stat().st_size
                csv = (folder / "hdeeprm_mem_bw_overutilization.csv").stat().st_size
                mode = "detail" if detail else "default"
                print(f"{name:30} {mode:8} {episodes:>9} {log:>14,} {csv:>14,}")


if __name__ == "__main__":
    main()
