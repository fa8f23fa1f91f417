"""hdeeprm-sweep's progress: a tqdm bar on a terminal, nothing in a log or a pipe."""

from __future__ import annotations

import io

from hdeeprm.sweep import Progress, ProgressPrinter


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def feed(stream: io.StringIO) -> str:
    printer = ProgressPrinter(stream, interval=0.0)
    progress = Progress(total=5, reused=1)
    printer(progress)
    progress.running = 2
    printer(progress)
    progress.done, progress.failed, progress.running = 3, 1, 0
    printer(progress, final=True)
    return stream.getvalue()


def test_terminal_shows_a_bar_ending_on_the_final_counts() -> None:
    shown = feed(Terminal())
    last = shown.split("\r")[-1]
    assert last.startswith("runs: 100%") and " 5/5 " in last and last.endswith("\n")
    assert "0 running, 1 failed, 0 queued, 1 from a previous sweep]" in last
    assert "2 running, 0 failed, 2 queued" in shown


def test_nothing_when_not_a_terminal() -> None:
    assert feed(io.StringIO()) == ""
