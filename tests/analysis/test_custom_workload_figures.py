"""mem_bubbles on a run made with ``hdeeprm-launch -cw``: the run folder has no workload.json
of its own, so the figure finds the custom workload through the run's input record, or takes
``--workload``; without either it says what to do (not "run hdeeprm-launch first")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from hdeeprm.cli.launch import main as launch
from hdeeprm.cli.visual import main as visual

REPO = Path(__file__).resolve().parents[2]
THESIS = REPO / "thesis_experiments" / "learning"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_mem_bubbles_of_a_custom_workload_run(tmp_path: Path) -> None:
    options = json.loads((THESIS / "options.json").read_text())
    options["platform_file_path"] = str(REPO / "platform_examples" / "learning.json")
    options["pybatsim"]["agent"] = {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"}
    (tmp_path / "options.json").write_text(json.dumps(options))
    workload = tmp_path / "mine" / "jobs.json"
    workload.parent.mkdir()
    shutil.copy(THESIS / "workload.json", workload)
    run = tmp_path / "run"
    result = CliRunner().invoke(
        launch, [str(tmp_path / "options.json"), "-cw", str(workload), "-o", str(run), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert not (run / "workload.json").exists()

    image = tmp_path / "mem.png"
    result = CliRunner().invoke(visual, [str(run), "mem_bubbles", "-s", str(image)])
    assert result.exit_code == 0, result.output
    assert image.read_bytes().startswith(PNG_MAGIC)

    moved = tmp_path / "elsewhere.json"
    workload.rename(moved)
    result = CliRunner().invoke(visual, [str(run), "mem_bubbles", "-s", str(image)])
    assert result.exit_code == 2
    assert "-cw" in result.output and "--workload FILE" in result.output

    image.unlink()
    result = CliRunner().invoke(
        visual, [str(run), "mem_bubbles", "-s", str(image), "--workload", str(moved)]
    )
    assert result.exit_code == 0, result.output
    assert image.read_bytes().startswith(PNG_MAGIC)
