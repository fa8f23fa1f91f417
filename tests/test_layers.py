"""Imports run one way through hdeeprm: each package imports only the layers below its own.

:data:`LAYERS` lists the packages (and the shared top-level modules), lowest first, as
docs/architecture.md states them. Every ``import`` and ``from ... import`` counts, at module
level, inside a function (a lazy import is a dependency all the same) or under
``TYPE_CHECKING``; relative imports are resolved. The same source also has no import cycle,
between packages nor between modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hdeeprm"

#: hdeeprm's layers, lowest first. A name is a top-level package or module of hdeeprm (``""``:
#: ``hdeeprm/__init__.py`` itself); names of one layer may import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    # core helpers
    (
        "",
        "errors",
        "logs",
        "_atomic",
        "_inputfile",
        "_jsonfile",
        "_manifest",
        "_digest",
        "_gc",
        "_derived",
        "_ray",
        "_native",
        "data",
    ),
    ("platform",),
    ("workload",),
    ("simulation",),
    ("scheduling",),
    ("decision",),
    ("options",),
    ("inputs",),
    ("analysis",),
    ("agents",),
    ("environment",),
    ("training",),
    ("scenarios",),
    ("comparison",),
    ("experiment",),
    ("protocol",),
    ("sweep",),
    ("cli",),
)
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``hdeeprm/a/b.py`` -> ``hdeeprm.a.b``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_package(root: Path = PACKAGE) -> dict[str, tuple[str, bool]]:
    """Each module's name -> (source, whether it is a package's ``__init__``)."""
    return {
        module_name(path, root): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in sorted(root.rglob("*.py"))
    }


def imports_of(
    name: str, source: str, is_package: bool, modules: Iterable[str]
) -> list[tuple[str, int]]:
    """The hdeeprm modules ``name`` imports (with the line), wherever the statement is."""
    known = set(modules)
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # ``from pkg import sub`` imports the submodule when there is one.
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                for alias in node.names
            ]
        else:
            continue
        found += [(t, node.lineno) for t in targets if t == "hdeeprm" or t.startswith("hdeeprm.")]
    return found


def top(module: str) -> str:
    """The top-level package or module of hdeeprm a module belongs to (``""``: the root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, dict[str, int]]:
    """Module -> {imported hdeeprm module: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for name, (source, is_package) in sources.items():
        edges = graph.setdefault(name, {})
        for target, line in imports_of(name, source, is_package, sources):
            if target != name:
                edges.setdefault(target, line)
    return graph


def back_imports(sources: Mapping[str, tuple[str, bool]]) -> list[str]:
    """Every import of a higher layer (or of an undeclared package): ``module:line -> target``."""
    found = []
    for name, edges in module_graph(sources).items():
        here = top(name)
        for target, line in edges.items():
            there = top(target)
            if here not in RANK or there not in RANK:
                found.append(f"{name}:{line} -> {target} (undeclared layer)")
            elif RANK[there] > RANK[here]:
                found.append(f"{name}:{line} -> {target}")
    return sorted(found)


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def package_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Top-level package -> the other top-level packages it imports."""
    graph: dict[str, set[str]] = {}
    for name, edges in module_graph(sources).items():
        here = top(name)
        graph.setdefault(here, set()).update(top(t) for t in edges if top(t) != here)
    return graph


def synthetic(**modules: str) -> dict[str, tuple[str, bool]]:
    """Module sources keyed ``a__b`` for ``hdeeprm.a.b`` (every one a plain module)."""
    return {"hdeeprm." + key.replace("__", "."): (src, False) for key, src in modules.items()}


# --- the checker, on sources that reproduce the back-imports it must catch -----------------
LAZY_SWEEP_IMPORT = synthetic(
    training__ppo="def build(kind):\n    from hdeeprm.sweep.ray_vector import RayVectorEnv\n",
    sweep__ray_vector="class RayVectorEnv:\n    pass\n",
)
ENVIRONMENT_EXPERIMENT_CYCLE = synthetic(
    environment__env="from hdeeprm.experiment import ExperimentInputs, prepare_inputs\n",
    environment__job_pickers="class CushPicker:\n    pass\n",
    experiment__cush="from hdeeprm.environment.job_pickers import CushPicker\n",
)


def test_checker_catches_a_lazy_import_of_a_higher_layer() -> None:
    assert back_imports(LAZY_SWEEP_IMPORT) == ["hdeeprm.training.ppo:2 -> hdeeprm.sweep.ray_vector"]


def test_checker_catches_a_package_cycle() -> None:
    assert back_imports(ENVIRONMENT_EXPERIMENT_CYCLE) == [
        "hdeeprm.environment.env:1 -> hdeeprm.experiment"
    ]
    assert cycles(package_graph(ENVIRONMENT_EXPERIMENT_CYCLE)) == [["environment", "experiment"]]


def test_checker_resolves_relative_and_submodule_imports() -> None:
    sources = {
        "hdeeprm.decision.fit": ("from .resources import CorePool\n", False),
        "hdeeprm.decision.resources": ("from . import fit\n", False),
        "hdeeprm.decision": ("", True),
        "hdeeprm.simulation.engine": ("from hdeeprm import decision\n", False),
    }
    assert cycles(module_graph(sources)) == [["hdeeprm.decision.fit", "hdeeprm.decision.resources"]]
    assert back_imports(sources) == ["hdeeprm.simulation.engine:1 -> hdeeprm.decision"]


def test_checker_flags_an_undeclared_package() -> None:
    sources = synthetic(newpkg__mod="import hdeeprm.errors\n")
    assert back_imports(sources) == ["hdeeprm.newpkg.mod:1 -> hdeeprm.errors (undeclared layer)"]


# --- hdeeprm itself -----------------------------------------------------------------------
def test_every_package_has_a_layer() -> None:
    tops = {top(name) for name in read_package()}
    assert tops - set(RANK) == set(), "add the new package to LAYERS (and docs/architecture.md)"


def test_no_import_of_a_higher_layer() -> None:
    assert back_imports(read_package()) == []


def test_no_import_cycle() -> None:
    sources = read_package()
    assert cycles(package_graph(sources)) == []
    assert cycles(module_graph(sources)) == []
