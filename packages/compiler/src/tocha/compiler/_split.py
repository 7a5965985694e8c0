"""What stays compiled when a function has a graph break.

A compiled function whose capture breaks (it runs ``backward()`` itself, steps an optimizer,
reads a tensor into Python...) runs eagerly for that guard key, as PyTorch runs the code
around a graph break. The modules it calls at the outermost level and the optimizers it steps
are seen during the capture (through the global module forward hooks and optimizer step
hooks, registered for the capture only); on the eager runs that follow, each such module's
``forward`` is compiled on its own (a `CompiledFunction` with the module's guards, set on the
instance for the duration of the call) and each SGD, Adam or AdamW step updates its groups
with the generated kernel (`_optimizer`). So ``@tocha.compile def train_step(x, y)`` doing
``loss = loss_fn(model(x), y); loss.backward(); opt.step()`` runs the model's forward and
backward compiled and the update as one kernel per group, the rest eagerly.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["Parts", "recorded_calls"]


@contextlib.contextmanager
def recorded_calls() -> Iterator[dict[str, list]]:
    """Within the block, the modules called at the outermost level (``"modules"``) and the
    optimizers stepped (``"optimizers"``), each once, in order."""
    seen: dict[str, list] = {"modules": [], "optimizers": []}
    depth = [0]
    handles = []

    def note(kind: str, obj: Any) -> None:
        if not any(o is obj for o in seen[kind]):
            seen[kind].append(obj)

    def before(module: Any, args: Any) -> None:
        if depth[0] == 0:
            note("modules", module)
        depth[0] += 1

    def after(module: Any, args: Any, output: Any) -> None:
        depth[0] -= 1

    modules = sys.modules.get("tocha.nn.modules.module")
    if modules is not None:
        handles.append(modules.register_module_forward_pre_hook(before))
        handles.append(modules.register_module_forward_hook(after))
    optimizers = sys.modules.get("tocha.optim.optimizer")
    if optimizers is not None:
        handles.append(
            optimizers.register_optimizer_step_pre_hook(lambda o, a, k: note("optimizers", o))
        )
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


class Parts:
    """The compiled parts of a function with a graph break: ``(module, compiled forward)``
    and ``(optimizer, compiled step)`` pairs, installed on the instances while the function
    runs."""

    def __init__(self, modules: list, optimizers: list) -> None:
        self.modules = modules
        self.optimizers = optimizers

    @staticmethod
    def make(seen: dict[str, list], make_compiled: Any) -> Parts | None:
        """The parts for what `recorded_calls` saw (None when there are none); the modules'
        forwards are compiled by ``make_compiled(forward, module)``."""
        from ._frontend import OptimizedModule
        from ._optimizer import CompiledStep, compilable_step

        modules = [
            (m, make_compiled(m.forward, m))
            for m in seen["modules"]
            if not isinstance(m, OptimizedModule) and "forward" not in vars(m)
        ]
        optimizers = [
            (o, CompiledStep(o.step)) for o in seen["optimizers"] if compilable_step(o.step)
        ]
        if not modules and not optimizers:
            return None
        return Parts(modules, optimizers)

    def describe(self) -> str:
        names = [type(m).__name__ for m, _ in self.modules]
        names += [f"{type(o).__name__}.step" for o, _ in self.optimizers]
        return ", ".join(names)

    def run(self, fn: Any, args: tuple, kwargs: dict) -> Any:
        """``fn(*args, **kwargs)`` with the compiled parts installed."""
        installed: list[Any] = []
        handles: list[Any] = []
        try:
            for module, compiled in self.modules:
                if "forward" not in vars(module):
                    vars(module)["forward"] = compiled
                    installed.append(module)
            for opt, step in self.optimizers:
                handles.append(opt.register_group_update(step.update))
            return fn(*args, **kwargs)
        finally:
            for module in installed:
                vars(module).pop("forward", None)
            for handle in handles:
                handle.remove()
