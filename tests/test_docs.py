"""Every command and code snippet of README.md and docs/*.md runs as written.

Each fenced block is extracted from the page:

* ``python`` blocks run in order, in one namespace per page;
* ``bash`` / ``sh`` blocks run line by line: ``export``, ``cd`` and the ``hdeeprm-*`` commands
  (run in this process, from this checkout, through their click entry points), anything else
  through ``bash``; every command must succeed;
* ``console`` blocks are sessions: each ``$ `` line runs as above and must print the lines
  that follow it (only when the real trace is there: a synthetic stand-in prints other
  numbers);
* ``json`` blocks must parse;
* blocks without a language are output listings and diagrams: not run.

A block preceded by ``<!-- no-test: REASON -->`` is not run; the reason must say why (it
needs Batsim, it installs packages, it is a fragment...).

Each page runs in a fresh copy of the repository's example folders (so runs write nowhere in
the checkout), with small substitute inputs where the docs name a user's own files: beside the
copy, ``../shared/traces`` holds a 1,200-job ``UniLu-Gaia-2014-1.swf.gz`` (the first lines
of the real trace when :mod:`hdeeprm.workload.archive` finds it, else a synthetic one), and the
copy's root holds the thesis 5.4 ``options.json``, ``workload.json`` and ``platform.xml`` and
that small trace. The snippet text itself is exactly what the page shows.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from trace_files import find

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COPIED = ("platform_examples", "thesis_experiments", "data", "agent_examples", "docs")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
NO_TEST = re.compile(r"<!--\s*no-test:\s*(?P<reason>.*?)\s*-->\s*$", re.S)
RUN_LANGS = {"python", "bash", "sh", "shell", "console", "json"}
GAIA_TRACE = find("UniLu-Gaia-2014-1.swf.gz")
REAL_TRACE = GAIA_TRACE is not None
TINY_TRACE_JOBS = 1200
#: Four 1 GFLOPS hosts and the master host, without P-states.
PLAIN_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="node_0" speed="1Gf"/>
    <host id="node_1" speed="1Gf"/>
    <host id="node_2" speed="1Gf"/>
    <host id="node_3" speed="1Gf"/>
  </zone>
</platform>
"""


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    skip_reason: str | None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip()
        marker = NO_TEST.search(before[-400:])
        reason = None
        if marker is not None and before.endswith("-->"):
            reason = marker.group("reason")
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(page, line, match.group("lang"), match.group("body"), reason))
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def test_skipped_blocks_say_why() -> None:
    for block in ALL_BLOCKS:
        if block.skip_reason is not None:
            assert len(block.skip_reason) >= 10, f"{block.name}: give a reason to skip"


def test_runnable_blocks_have_a_language() -> None:
    """Unlabelled blocks are not run, so only listings may go without a language: a block
    that starts like a command or code must say what it is."""
    starts = ("hdeeprm-", "import ", "from ", "make ", "pip ", "export ", "cd ", "python")
    for block in ALL_BLOCKS:
        if not block.lang:
            first = block.body.lstrip().split("\n", 1)[0]
            assert not first.startswith(starts), f"{block.name}: label the block's language"


# --- the workspace ----------------------------------------------------------------------
def tiny_trace(path: Path) -> None:
    """The first jobs of the Gaia trace, or a synthetic stand-in when it is absent."""
    if GAIA_TRACE is not None:
        lines = []
        with gzip.open(GAIA_TRACE, "rt", encoding="latin-1") as handle:
            for line in handle:
                lines.append(line)
                if sum(1 for x in lines if not x.startswith(";")) >= TINY_TRACE_JOBS:
                    break
        with gzip.open(path, "wt", encoding="latin-1") as handle:
            handle.writelines(lines)
    else:
        from hdeeprm.workload import write_lublin_swf

        write_lublin_swf(path, TINY_TRACE_JOBS, 1024, seed=1)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A prepared workspace, copied afresh for each page."""
    root = tmp_path_factory.mktemp("docs_template")
    work = root / "repo"
    work.mkdir()
    for name in COPIED:
        shutil.copytree(REPO / name, work / name)
    traces = root / "shared" / "traces"
    traces.mkdir(parents=True)
    tiny_trace(traces / "UniLu-Gaia-2014-1.swf.gz")
    shutil.copy(traces / "UniLu-Gaia-2014-1.swf.gz", work / "UniLu-Gaia-2014-1.swf.gz")
    learning = work / "thesis_experiments" / "learning"
    options = json.loads((learning / "options.json").read_text())
    options["platform_file_path"] = str(work / "platform_examples" / "learning.json")
    (work / "options.json").write_text(json.dumps(options))
    shutil.copy(learning / "workload.json", work / "workload.json")
    quickstart = work / "data" / "quickstart" / "options.json"
    options = json.loads(quickstart.read_text())
    options["synthetic_workload"]["nb_jobs"] = 200
    quickstart.write_text(json.dumps(options))
    return root


# --- running blocks -----------------------------------------------------------------------
def cli_entry(name: str):
    """The click command behind an ``hdeeprm-*`` console script of this checkout."""
    import importlib

    scripts = {
        "hdeeprm-launch": "launch",
        "hdeeprm-jobstat": "jobstat",
        "hdeeprm-visual": "visual",
        "hdeeprm-metrics": "metrics",
        "hdeeprm-clean": "clean",
        "hdeeprm-sim": "sim",
        "hdeeprm-sweep": "sweep",
        "hdeeprm-traces": "traces",
    }
    if name not in scripts:
        return None
    return importlib.import_module(f"hdeeprm.cli.{scripts[name]}").main


def logical_lines(body: str) -> list[str]:
    """Shell lines with ``\\`` continuations joined, comments and blank lines dropped."""
    joined = body.replace("\\\n", " ")
    lines = []
    for raw in joined.splitlines():
        words = shlex.split(raw, comments=True)
        if words:
            lines.append(raw)
    return lines


def run_console(block: Block, cwd: Path, env: dict[str, str], real_trace: bool) -> None:
    """``$ command`` lines, each followed by the output it must print."""
    session: list[tuple[str, list[str]]] = []
    for raw in block.body.splitlines():
        if raw.startswith("$ "):
            session.append((raw[2:], []))
        elif session:
            session[-1][1].append(raw)
    assert session, f"{block.name}: a console block needs '$ ' command lines"
    for command, expected in session:
        printed = run_shell(Block(block.page, block.line, "sh", command, None), cwd, env)
        if real_trace:
            assert printed.rstrip("\n").splitlines() == expected, f"{block.name}: {command}"


def run_shell(block: Block, cwd: Path, env: dict[str, str]) -> str:
    """Run a shell block line by line; return what its commands printed on stdout."""
    printed = []
    for line in logical_lines(block.body):
        expanded = os.path.expandvars(line) if "$" in line else line
        words = shlex.split(expanded, comments=True)
        if words[0] == "export":
            for assignment in words[1:]:
                key, _, value = assignment.partition("=")
                env[key] = value
                os.environ[key] = value
            continue
        if words[0] == "cd":
            cwd = (cwd / words[1]).resolve()
            os.chdir(cwd)
            continue
        command = cli_entry(words[0])
        if command is not None:
            result = CliRunner().invoke(command, words[1:], catch_exceptions=False)
            assert result.exit_code == 0, f"{block.name}: {line}\n{result.output}"
            printed.append(result.stdout)
            continue
        done = subprocess.run(
            ["bash", "-ec", line], cwd=cwd, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{block.name}: {line}\n{done.stdout}{done.stderr}"
        printed.append(done.stdout)
    return "".join(printed)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_page_runs(page: Path, template: Path, tmp_path: Path, monkeypatch) -> None:
    blocks = [b for b in blocks_of(page) if b.lang in RUN_LANGS and b.skip_reason is None]
    if not blocks:
        pytest.skip("no runnable block")
    root = tmp_path / "page"
    shutil.copytree(template, root, symlinks=True)
    work = root / "repo"
    if page.name == "simulation.md":  # its generic scheduler needs hosts without P-states
        (work / "platform.xml").write_text(PLAIN_PLATFORM)
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    env = dict(os.environ)
    for block in blocks:
        os.chdir(work)
        if block.lang == "json":
            try:
                json.loads(block.body)
            except json.JSONDecodeError as exc:
                pytest.fail(f"{block.name}: invalid JSON: {exc}")
        elif block.lang == "python":
            code = compile(block.body, block.name, "exec")
            exec(code, namespace)  # noqa: S102 - the documentation's own snippet
        elif block.lang == "console":
            run_console(block, work, env, REAL_TRACE)
        else:
            run_shell(block, work, env)
