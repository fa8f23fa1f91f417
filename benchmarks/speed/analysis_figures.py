"""Time hdeeprm-metrics and every hdeeprm-visual figure on a large run folder.

Usage: ``python benchmarks/speed/analysis_figures.py [RUN_DIR] [--nb-jobs N]``. Without RUN_DIR, a
Gaia run (``--nb-jobs`` jobs of the UniLu Gaia trace, default 50,000, on the 2,280-core Gaia
platform, shortest-high_gflops) is simulated into a temporary folder first. Prints the
seconds to read and summarise the run and to draw and save each figure as a 1000 x 600 PNG.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from hdeeprm.analysis.metrics import summarize_run  # noqa: E402
from hdeeprm.analysis.plots import VISUALIZATIONS, save_figure, visualize  # noqa: E402
from hdeeprm.analysis.runfolder import RunFolder, RunFolderError  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)
PLATFORM = REPO / "platform_examples" / "gaia.json"


def make_gaia_run(folder: Path, nb_jobs: int) -> None:
    """Simulate ``nb_jobs`` Gaia jobs into ``folder`` with the launcher's own code."""
    from hdeeprm.experiment.run import run_classic
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options

    options = folder / "options.json"
    options.write_text(
        json.dumps(
            {
                "seed": 1,
                "nb_jobs": nb_jobs,
                "start_job": 4,
                "workload_file_path": str(TRACE),
                "platform_file_path": str(PLATFORM),
                "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"}},
            }
        )
    )
    run_classic(prepare_inputs(load_options(options), folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", type=Path)
    parser.add_argument("--nb-jobs", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.run_dir
        if folder is None:
            common.require_trace(TRACE)
            folder = Path(tmp) / "gaia"
            folder.mkdir()
            t0 = time.perf_counter()
            make_gaia_run(folder, args.nb_jobs)
            print(f"simulated {args.nb_jobs:,} Gaia jobs in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        run = RunFolder(folder)
        summary = summarize_run(run)
        print(
            f"read out_jobs.csv + metrics ({summary.jobs.nb_jobs:,} jobs): "
            f"{time.perf_counter() - t0:.2f} s"
        )
        for name in VISUALIZATIONS:
            t0 = time.perf_counter()
            try:
                fig = visualize(name, run)
            except RunFolderError as exc:
                print(f"{name:24s} skipped: {exc}")
                continue
            t1 = time.perf_counter()
            out = Path(tmp) / f"{name}.png"
            save_figure(fig, out)
            t2 = time.perf_counter()
            print(
                f"{name:24s} draw {t1 - t0:6.2f} s  save {t2 - t1:6.2f} s  "
                f"{out.stat().st_size / 1024:7.0f} KiB"
            )


if __name__ == "__main__":
    main()
