"""The speed suite: ``python -m benchmarks`` (or ``python benchmarks/run.py``; ``make bench``).

Runs each benchmark of ``suite.py`` in a fresh process, on the traces it finds (``hdeeprm-traces
path``: ``$HDEEPRM_TRACES``, then the trace cache), skipping and listing the ones whose trace is
absent; prints one table (benchmark, figure, value, unit, CPU s) and writes it as JSON.

    python -m benchmarks [--quick] [--only NAME ...] [--json FILE] [--compare REV] [--rounds N]

``--quick`` runs a smoke subset on smaller inputs (seconds); ``--compare REV`` checks REV out
with ``git worktree add`` into a temporary folder and runs the same benchmarks on it
(``PYTHONPATH`` at that folder), alternated with the current tree round by round, then prints
both side by side with their ratio (current / REV; for rates, above 1 means the current tree is
faster). REV's compiled kernels are built in its folder first, as ``pip install`` builds them
(``hdeeprm/_native.py``); ``--compare pure`` instead runs the current tree a second time with
``HDEEPRM_PURE_PYTHON=1``, what the kernels gain. Each benchmark reports whether its kernels
ran compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import common
from suite import BY_NAME, SUITE

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
HEADERS = ("benchmark", "figure", "value", "unit", "CPU s")


def child(name: str, quick: bool, trace: str | None) -> dict[str, Any]:
    """Run one benchmark in this process; its rows and which package it timed."""
    import hdeeprm

    bench = BY_NAME[name]
    path = Path(trace) if trace else None
    if path is not None and bench.trace is not None:
        common.TRACE_OVERRIDES[bench.trace] = path
        common.TRACE_OVERRIDES[common.TRACE_FILES[bench.trace]] = path
    rows = bench.run(path, quick)
    try:  # older commits have no compiled kernels
        from hdeeprm import _native
    except ImportError:
        kernels: dict[str, str] = {}
    else:
        kernels = _native.report()
    return {
        "rows": [list(r) for r in rows],
        "hdeeprm": str(Path(hdeeprm.__file__).parent),
        "kernels": kernels,
    }


#: ``--compare`` value that runs the current tree again without its compiled kernels.
PURE = "pure"


def measure(
    name: str, quick: bool, trace: Path | None, tree: Path, pure: bool = False
) -> dict[str, Any]:
    """One benchmark in a fresh process with ``hdeeprm`` from ``tree`` (its compiled kernels
    off when ``pure``); its rows, or an error."""
    command = [sys.executable, str(HERE / "run.py"), "--child", name]
    if quick:
        command.append("--quick")
    if trace is not None:
        command += ["--trace", str(trace)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), str(HERE)]))
    if pure:
        env["HDEEPRM_PURE_PYTHON"] = "1"
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {done.returncode}: {last}"}
    result = json.loads(lines[-1])
    expected = (tree / "hdeeprm").resolve()
    if Path(result["hdeeprm"]).resolve() != expected:
        return {"error": f"timed the package at {result['hdeeprm']}, not {expected}"}
    return result


def select(args: argparse.Namespace) -> list[str]:
    if args.only:
        unknown = [n for n in args.only if n not in BY_NAME]
        if unknown:
            sys.exit(f"unknown benchmark(s) {unknown}; known: {', '.join(BY_NAME)}")
        return list(args.only)
    return [b.name for b in SUITE if b.quick or not args.quick]


def traces_for(names: list[str]) -> tuple[dict[str, Path | None], list[dict[str, str]]]:
    """The trace of each benchmark that has one available, and the skipped ones with why."""
    found: dict[str, Path | None] = {}
    skipped = []
    for name in names:
        short = BY_NAME[name].trace
        if short is None:
            found[name] = None
            continue
        path = common.find_trace(short)
        if path is None:
            skipped.append({"benchmark": name, "reason": common.missing_message(short)})
        else:
            found[name] = path
    return found, skipped


def worktree(rev: str, folder: Path) -> Path:
    """``rev`` checked out (detached) in ``folder``; exits when git cannot."""
    done = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), rev],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"cannot check {rev} out: {done.stderr.strip()}")
    build_kernels(folder)
    return folder


def build_kernels(tree: Path) -> None:
    """Compile ``tree``'s optional kernels in place, as ``pip install`` would (a commit without
    ``setup.py`` has none; a failed build leaves its pure-Python code, which the report says)."""
    if (tree / "setup.py").is_file():
        subprocess.run(
            [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
            cwd=tree,
            capture_output=True,
            check=False,
        )


def kernels_text(results: dict[str, dict[str, Any]]) -> str:
    """How the kernels ran in these results: each one compiled, or why not."""
    states: dict[str, str] = {}
    for result in results.values():
        states.update(result.get("kernels", {}))
    if not states:
        return "no compiled kernels"
    return "; ".join(f"{name.rsplit('.', 1)[-1]} {state}" for name, state in sorted(states.items()))


def remove_worktree(folder: Path) -> None:
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)],
        capture_output=True,
        check=False,
    )


def commit_of(tree: Path) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or None


def best(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Of several rounds of one benchmark, each figure's best round (smallest CPU time: other
    processes only ever add time), or the first error."""
    good = [r for r in results if "rows" in r]
    if not good:
        return results[0]
    rows = [min(column, key=lambda row: row[3]) for column in zip(*(r["rows"] for r in good))]
    return {"rows": rows, "hdeeprm": good[0]["hdeeprm"], "kernels": good[0].get("kernels", {})}


def table_rows(name: str, result: dict[str, Any]) -> list[list[Any]]:
    if "error" in result:
        return [[name, f"failed: {result['error']}", None, "", None]]
    return [[name, figure, value, unit, cpu] for figure, value, unit, cpu in result["rows"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="a smoke subset on small inputs")
    parser.add_argument("--only", nargs="+", metavar="NAME", help=f"among {', '.join(BY_NAME)}")
    parser.add_argument("--json", type=Path, default=Path("bench.json"), help="default bench.json")
    parser.add_argument(
        "--compare",
        metavar="REV",
        help=f"also run on this commit, alternated ('{PURE}': this tree without its kernels)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="rounds per tree (best kept)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--trace", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.quick, args.trace)))
        return 0
    # This process looks the traces up with the tree's own package, whatever is installed.
    sys.path.insert(0, str(REPO))
    if args.list:
        for bench in SUITE:
            needs = common.TRACE_FILES[bench.trace] if bench.trace else "no trace"
            quick = ", in --quick" if bench.quick else ""
            print(f"{bench.name:12} {bench.question} ({needs}{quick})")
        return 0

    names = select(args)
    traces, skipped = traces_for(names)
    load = common.load_average()
    load_text = f"load average {load[0]:.2f}" if load else "load average unknown"
    print(f"{len(traces)} benchmark(s), {os.cpu_count()} CPUs, {load_text}", flush=True)
    trees = {"current": REPO}
    scratch = None
    if args.compare == PURE:
        trees[PURE] = REPO
    elif args.compare:
        scratch = Path(tempfile.mkdtemp(prefix="hdeeprm-bench-"))
        trees[args.compare] = worktree(args.compare, scratch / "tree")
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {t: {} for t in trees}
    started = time.perf_counter()
    try:
        for _ in range(max(1, args.rounds)):
            for name, trace in traces.items():
                for label, tree in trees.items():  # alternated: a load change hits both
                    result = measure(name, args.quick, trace, tree, pure=label == PURE)
                    runs[label].setdefault(name, []).append(result)
    finally:
        if scratch is not None:
            remove_worktree(scratch / "tree")
            subprocess.run(["rm", "-rf", str(scratch)], check=False)
    results = {label: {n: best(r) for n, r in per.items()} for label, per in runs.items()}

    current = results["current"]
    rows = [row for name in traces for row in table_rows(name, current[name])]
    print(common.format_table(HEADERS, rows))
    print(f"kernels: {kernels_text(current)}")
    for skip in skipped:
        print(f"skipped {skip['benchmark']}: {skip['reason']}")
    report: dict[str, Any] = {
        "commit": commit_of(REPO),
        "quick": args.quick,
        "machine": common.machine(),
        "seconds": round(time.perf_counter() - started, 1),
        "results": [dict(zip(HEADERS, row, strict=True)) for row in rows],
        "kernels": kernels_text(current),
        "skipped": skipped,
    }
    if args.compare:
        other = results[args.compare]
        side = []
        for name in traces:
            mine, theirs = table_rows(name, current[name]), table_rows(name, other[name])
            for a, b in zip(mine, theirs, strict=False):
                ratio = a[2] / b[2] if a[2] and b[2] else None
                figure = b[1] if a[2] is not None and b[2] is None else a[1]
                side.append([name, figure, a[3], a[2], b[2], ratio])
        headers = ("benchmark", "figure", "unit", "current", args.compare, "ratio")
        print(f"\ncurrent against {args.compare} ({commit_of(REPO)} / {args.compare}):")
        print(common.format_table(headers, side))
        print(f"kernels of {args.compare}: {kernels_text(other)}")
        report["compare"] = {
            "rev": args.compare,
            "kernels": kernels_text(other),
            "results": [dict(zip(headers[:3] + ("current", "other", "ratio"), r)) for r in side],
        }
    common.write_json(args.json, report)
    print(f"written {args.json}")
    failed = any("error" in r for per in results.values() for r in per.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
