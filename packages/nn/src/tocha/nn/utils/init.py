"""`skip_init`: a module made without running its parameters' initialisation."""

from __future__ import annotations

import inspect
from typing import Any

from ..modules.module import Module


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """Instantiate `module_cls(*args, **kwargs)` with uninitialised parameters and buffers:
    the module is built on the meta device, then given empty storage on ``kwargs["device"]``
    (the CPU by default). `module_cls` must accept a ``device`` keyword argument."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
