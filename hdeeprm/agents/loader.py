"""Load a user's learning agent from a Python file (``hdeeprm-launch -a AGENT.py``).

The file defines one class extending :class:`~hdeeprm.agents.LearningAgent` (usually through
:class:`~hdeeprm.agents.PolicyLearningAgent`). Its constructor receives, by name, whichever of
these it declares: ``gamma``, ``hidden``, ``lr`` (from the options' agent block),
``action_size``, ``observation_size``, and every key of the agent block's ``params``. Helper
classes are fine as long as exactly one agent class is not a base of another one in the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hdeeprm._inputfile import check_input_file
from hdeeprm.agents.learning import LearningAgent
from hdeeprm.errors import InputError

#: Constructor arguments hdeeprm always offers (besides ``params``).
STANDARD_ARGUMENTS = ("gamma", "hidden", "lr", "action_size", "observation_size")


def _module_name(path: Path) -> str:
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    return f"hdeeprm_user_agent_{digest}"


def load_agent_class(path: str | os.PathLike[str]) -> type[LearningAgent]:
    """Import ``path`` and return the learning agent class it defines.

    Raises :class:`InputError` (naming the file) when the file is missing, fails to import,
    defines no ``LearningAgent`` subclass or several unrelated ones.
    """
    if not os.path.lexists(path):
        raise InputError("agent file not found (expected a Python file defining the agent)", path)
    check_input_file(path, "agent file")  # before resolve(): a symlink loop, a FIFO
    file = Path(path).resolve()
    name = _module_name(file)
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise InputError("cannot import: expected a Python source file (.py)", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling-free introspection need it
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise InputError(f"syntax error: {exc.msg}", path, f"line {exc.lineno}") from None
    except Exception as exc:  # noqa: BLE001 - any failure of user code is reported the same
        sys.modules.pop(name, None)
        raise InputError(
            f"importing the agent file failed: {type(exc).__name__}: {exc}", path
        ) from exc
    candidates = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, LearningAgent) and obj.__module__ == name
    ]
    if not candidates:
        raise InputError(
            "defines no learning agent: expected one class extending "
            "hdeeprm.agents.PolicyLearningAgent, ValueLearningAgent or LearningAgent",
            path,
        )
    leaves = [c for c in candidates if not any(o is not c and issubclass(o, c) for o in candidates)]
    if len(leaves) > 1:
        names = ", ".join(sorted(c.__name__ for c in leaves))
        raise InputError(
            f"defines several learning agents ({names}); expected exactly one (keep one in "
            "the file, or make the others its base classes)",
            path,
        )
    return leaves[0]


def _agent_value(options: Any, key: str) -> Any:
    if isinstance(options, Mapping):
        return options.get(key)
    return getattr(options, key, None)


def build_agent(
    path: str | os.PathLike[str],
    agent_options: Any,
    *,
    observation_size: int,
    action_size: int,
) -> LearningAgent:
    """Construct the agent of ``path`` from the options' agent block.

    ``agent_options`` is an :class:`~hdeeprm.options.AgentOptions` (or a mapping with
    ``gamma``, ``hidden``, ``lr`` and ``params``). Only the arguments the constructor declares
    are passed; a ``params`` key it does not accept, or a required argument hdeeprm cannot
    supply, is an :class:`InputError`.
    """
    cls = load_agent_class(path)
    offered: dict[str, Any] = {
        "gamma": _agent_value(agent_options, "gamma"),
        "hidden": _agent_value(agent_options, "hidden"),
        "lr": _agent_value(agent_options, "lr"),
        "action_size": int(action_size),
        "observation_size": int(observation_size),
    }
    offered = {k: v for k, v in offered.items() if v is not None}
    params = dict(_agent_value(agent_options, "params") or {})
    try:
        signature = inspect.signature(cls.__init__)
    except (TypeError, ValueError):  # pragma: no cover - builtin __init__
        signature = inspect.Signature()
    parameters = [p for p in list(signature.parameters.values())[1:]]
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters)
    accepted = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    unknown = sorted(k for k in params if k not in accepted and not takes_any)
    if unknown:
        raise InputError(
            f"agent params {', '.join(map(repr, unknown))} are not arguments of "
            f"{cls.__name__}.__init__ (it accepts: {', '.join(sorted(accepted)) or 'nothing'})",
            path,
            "pybatsim.agent.params",
        )
    kwargs = {k: v for k, v in offered.items() if takes_any or k in accepted}
    kwargs.update(params)
    for p in parameters:
        if (
            p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.default is p.empty
            and p.name not in kwargs
        ):
            raise InputError(
                f"{cls.__name__}.__init__ needs argument {p.name!r}, which hdeeprm does not "
                f"supply: add it to pybatsim.agent.params or give it a default (hdeeprm "
                f"supplies {', '.join(STANDARD_ARGUMENTS)})",
                path,
            )
    try:
        agent = cls(**kwargs)
    except Exception as exc:  # noqa: BLE001 - user code
        raise InputError(
            f"constructing {cls.__name__} failed: {type(exc).__name__}: {exc}", path
        ) from exc
    if not agent._learning_init_called and "gamma" in offered:
        # Constructors that never call super().__init__ (thesis appendix G) still get the
        # options' discount factor.
        agent.gamma = float(offered["gamma"])
    return agent
