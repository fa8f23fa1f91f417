"""thesis_experiments/easy/reproduce.py: the thesis's per-triple table, the ranking statistic,
and an end-to-end run of the best triple on the head of KTH-SP2."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from trace_files import trace_path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "thesis_experiments" / "easy" / "reproduce.py"


def _script():
    spec = importlib.util.spec_from_file_location("thesis_easy_reproduce", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


R = _script()


def test_spearman_by_hand() -> None:
    assert R.spearman([1.0, 2.0, 3.0], [10.0, 20.0, 30.0]) == pytest.approx(1.0)
    assert R.spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    # ties get their average rank: a -> (0, 1.5, 1.5, 3), b -> (0, 2, 1, 3); both mean 1.5;
    # covariance 2.25 + 0 + 0 + 2.25 = 4.5, variances 4.5 and 5: rho = 4.5 / sqrt(22.5)
    rho = R.spearman([1.0, 2.0, 2.0, 3.0], [1.0, 3.0, 2.0, 4.0])
    assert rho == pytest.approx(3 / math.sqrt(10))


def test_thesis_table_covers_every_swept_triple() -> None:
    thesis = R.thesis_values()
    assert len(thesis) == 129  # 120 learned, 6 AVE2, EASY, 2 clairvoyant
    keys = [R.thesis_key(spec) for spec, _ in R.losses().values()]
    keys += [R.thesis_key(spec) for spec, _ in R.triples().values()]
    assert all(key in thesis for key in keys)
    # Table 4.1 / 4.6 / 4.7 rounded from the same rows
    assert round(thesis[("easy", "requested", "", "", "", "requested")], 1) == 92.6
    assert round(thesis[("easy-sjbf", "ave2", "", "", "", "incremental")], 1) == 63.5
    best = R.thesis_key(R.BEST_TRIPLE)
    assert best == ("easy-sjbf", "regression", "squared", "linear", "large_area", "incremental")
    assert round(thesis[best], 1) == 51.4
    learned = {k: v for k, v in thesis.items() if k[1] == "regression"}
    assert min(learned, key=learned.get) == best
    fcfs = [v for k, v in learned.items() if k[0] == "easy"]
    assert round(max(fcfs), 1) == 93.2  # Table 4.6's FCFS upper end


def test_csv_is_new_and_atomic(tmp_path: Path) -> None:
    taken = tmp_path / "results.csv"
    taken.write_text("a user's file\n")
    with pytest.raises(FileExistsError, match="already exists"):
        R.open_new_csv(taken)
    assert taken.read_text() == "a user's file\n"
    out, tmp = R.open_new_csv(tmp_path / "new.csv")
    out.close()
    assert tmp.name == ".new.csv.tmp" and not (tmp_path / "new.csv").exists()


def test_bad_thesis_row_names_the_file_and_row(tmp_path: Path) -> None:
    bad = tmp_path / "thesis.csv"
    bad.write_text(
        "# comment\nvariant,predictor,over,under,weight,correction,avebsld\n"
        "easy,requested,,,,requested,92.6\neasy,ave2,,,,requested,sixty\n"
    )
    with pytest.raises(ValueError, match=r"thesis\.csv: data row 2"):
        R.thesis_values(bad)


def test_best_triple_end_to_end_on_kth_head() -> None:
    trace = trace_path(R.TRACE_NAME)
    platform, sim_platform, workload = R.inputs(trace, 1500)
    runs = []
    for _ in range(2):
        model = R.OnlineRegression()
        jobs = R.simulate_once(platform, sim_platform, workload, R.BEST_TRIPLE, model)
        runs.append([(j.spec.id, j.start_time) for j in jobs])
        assert len(jobs) == 1500 and model.t == 1500  # one NAG step per completion
    assert runs[0] == runs[1]  # deterministic


def test_markdown_table_from_a_results_file(tmp_path: Path) -> None:
    thesis = R.thesis_values()
    results = tmp_path / "results.csv"
    rows = ["heuristic,avebsld,thesis,max_bsld,mean_wait,cpu_s"]
    for name, (spec, _) in R.losses().items():
        rows.append(f"{name},{thesis[R.thesis_key(spec)] + 1.0},,0,0,0")
    results.write_text("\n".join(rows) + "\n")
    table = R.markdown_table(results).splitlines()
    assert len(table) == 2 + 20  # header, rule, one row per loss
    assert table[0].startswith("| over / under / weight | easy / requested |")
    e_loss = next(line for line in table if line.startswith("| squared / linear / large_area"))
    # easy-sjbf / incremental is the 5th cell: ours = thesis + 1
    assert e_loss.split(" | ")[5] == "52.4 (51.4)"
    results.write_text("\n".join(rows[:-1]) + "\n")
    with pytest.raises(
        ValueError, match="no row for 'linear/linear/large_area/doubling/easy-sjbf'"
    ):
        R.markdown_table(results)
