"""Every figure, drawn at the sizes the docs use, keeps all of its text inside the canvas.

Each text artist (titles, labels, tick labels, legend entries, annotations) is measured with
matplotlib's renderer after a full draw, exactly as a saved PNG would lay it out.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from handmade import make_run  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from hdeeprm.analysis.metrics import plot_metrics, summarize_runs  # noqa: E402
from hdeeprm.analysis.plots import VISUALIZATIONS, new_figure, visualize  # noqa: E402
from hdeeprm.analysis.runfolder import RunFolder  # noqa: E402

#: Sizes (inches): the gallery's and a small one for every figure; the CLI defaults and the
#: gallery's for the metrics bars, whose eight panels are the tightest.
SIZES = [(8.0, 5.0), (6.0, 4.0)]
METRICS_SIZES = [(8.0, 5.0), (10.0, 6.0), (12.0, 6.5)]


def texts_outside(fig) -> list[str]:
    """Texts drawn on ``fig`` whose window extent leaves the canvas.

    Only texts matplotlib actually draws count (tick labels outside the view limits exist as
    objects but are never drawn), so :meth:`Text.draw` is wrapped during one full draw.
    """
    drawn: list[tuple[Text, object]] = []
    original = Text.draw

    def recording_draw(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self, self.get_window_extent(renderer)))

    Text.draw = recording_draw
    try:
        FigureCanvasAgg(fig).draw()  # the renderer a saved PNG uses
    finally:
        Text.draw = original
    canvas = fig.bbox
    bad = []
    for text, box in drawn:
        # Half a pixel of tolerance for anti-aliasing rounding.
        if (
            box.x0 < canvas.x0 - 0.5
            or box.y0 < canvas.y0 - 0.5
            or box.x1 > canvas.x1 + 0.5
            or box.y1 > canvas.y1 + 0.5
        ):
            bad.append(f"{text.get_text()!r} at {tuple(round(v) for v in box.bounds)}")
    assert drawn, "nothing was drawn"
    return bad


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    """The hand-made run folder, and four copies with long names (legend entries)."""
    root = tmp_path_factory.mktemp("figure_text")
    first = make_run(root / "run_0")
    copies = [root / f"a_rather_long_run_folder_name_{k}" for k in range(1, 5)]
    for copy in copies:
        shutil.copytree(first, copy)
    return [first, *copies]


def test_the_checker_sees_clipped_text() -> None:
    fig = new_figure((4.0, 3.0))
    ax = fig.subplots()
    ax.set_title("a title much too long to fit in a figure only four inches wide, surely")
    assert texts_outside(fig)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]:g}x{s[1]:g}")
@pytest.mark.parametrize("name", list(VISUALIZATIONS))
def test_visualization_text_inside_canvas(runs: list[Path], name: str, size) -> None:
    run = RunFolder(runs[0])
    fig = visualize(name, run, new_figure(size))
    assert texts_outside(fig) == []


@pytest.mark.parametrize("size", METRICS_SIZES, ids=lambda s: f"{s[0]:g}x{s[1]:g}")
@pytest.mark.parametrize("nb_runs", [1, 2, 5])
def test_metrics_text_inside_canvas(runs: list[Path], size, nb_runs: int) -> None:
    fig = plot_metrics(summarize_runs([str(r) for r in runs[:nb_runs]]), new_figure(size))
    assert texts_outside(fig) == []
