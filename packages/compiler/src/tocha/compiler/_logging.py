"""``TOCHA_LOGS``: what the compiler prints, as ``TORCH_LOGS`` chooses for PyTorch's.

A comma-separated list of ``graph`` (each captured graph), ``code`` (each generated
function), ``kernels`` (each fused kernel's spec), ``recompiles`` (a guard failed and the
program is captured again), ``graph_breaks`` and ``fallbacks`` (where and why eager code
runs instead), or ``all``. Messages go to the ``tocha.compiler`` logger, which prints them
to stderr when ``TOCHA_LOGS`` names them. Fallbacks and graph breaks are always logged at
DEBUG level, so a handler the program installs sees them too.
"""

from __future__ import annotations

import logging
import os
from typing import Any

__all__ = ["code", "enabled", "fallback", "graph", "graph_break", "kernel", "recompile"]

LOGGER = logging.getLogger("tocha.compiler")
_ALL = ("graph", "code", "kernels", "recompiles", "graph_breaks", "fallbacks")


def _artifacts() -> frozenset[str]:
    names = {n.strip() for n in os.environ.get("TOCHA_LOGS", "").split(",") if n.strip()}
    names = {n.lstrip("+") for n in names}
    if "all" in names:
        names.update(_ALL)
    return frozenset(names)


def enabled(artifact: str) -> bool:
    """Whether ``TOCHA_LOGS`` names `artifact` (read at each call: tests set it)."""
    return artifact in _artifacts()


def _emit(artifact: str, message: str) -> None:
    if enabled(artifact):
        if not LOGGER.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("[tocha.compile] %(message)s"))
            LOGGER.addHandler(handler)
        LOGGER.setLevel(logging.DEBUG)
        LOGGER.info(message)
    else:
        LOGGER.debug(message)


def graph(name: str, gm: Any) -> None:
    """A captured graph (always logged at DEBUG level as "captured <name>")."""
    if enabled("graph"):
        _emit("graph", f"captured {name}:\n{gm.graph}")
    else:
        LOGGER.debug(f"captured {name}")


def code(source: str) -> None:
    """A generated function's source."""
    if enabled("code"):
        _emit("code", f"generated code:\n{source}")


def kernel(spec: Any, kernel_fn: Any) -> None:
    """A fused kernel: its spec, and its generated source when the generator kept it."""
    if enabled("kernels") or enabled("code"):
        source = getattr(kernel_fn, "source", "")
        _emit("kernels" if enabled("kernels") else "code", f"fused kernel {spec}\n{source}")


def recompile(message: str) -> None:
    _emit("recompiles", f"recompiling: {message}")


def graph_break(message: str) -> None:
    _emit("graph_breaks", f"graph break: {message}")


def fallback(message: str) -> None:
    _emit("fallbacks", f"running eagerly: {message}")
