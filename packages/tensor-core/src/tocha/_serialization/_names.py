"""The names a checkpoint gives tocha's classes and functions: PyTorch's.

A pickle names a class or function by ``module.qualname``. tocha writes its own objects under
PyTorch's names (``tocha.nn.modules.linear.Linear`` as ``torch.nn.modules.linear.Linear``),
so that ``torch.load`` finds PyTorch's classes in a whole model tocha saved; `load` maps them
back, and matches ``add_safe_globals`` allowlists by the same names, so an allowlist written
for PyTorch (``torch.nn.modules.activation.MultiheadAttention``) allows tocha's class.

An object's PyTorch name is its module with ``tocha`` for ``torch``, except that an object
defined in a private module is named where it is published (``tocha.nn._functional.*.relu``
is ``torch.nn.functional.relu``, ``tocha._tensor.Tensor`` is ``torch.Tensor``), the
functions PyTorch builds in C take the module it gives them (``torch._C._nn.gelu``), and the
few classes whose module differs from PyTorch's are in `_MOVED`. Kept free of heavy imports.
"""

from __future__ import annotations

import importlib
import sys

# tocha's location -> PyTorch's, for the classes tocha defines in another module than PyTorch.
_MOVED = {
    "tocha.nn.modules.attention.MultiheadAttention": (
        "torch.nn.modules.activation.MultiheadAttention"
    ),
}
# The functions of ``torch.nn.functional`` that PyTorch builds in C, by the module they name:
# pickled (and allowlisted) under it, not under ``torch.nn.functional``.
_C_FUNCTIONAL = {
    "torch._C._nn": (
        "avg_pool2d avg_pool3d elu_ gelu hardtanh_ leaky_relu_ linear logsigmoid one_hot "
        "scaled_dot_product_attention softplus softshrink"
    ).split(),
    "torch": (
        "adaptive_avg_pool1d avg_pool1d bilinear celu_ channel_shuffle conv1d conv2d conv3d "
        "conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity "
        "hardshrink native_channel_shuffle pairwise_distance pdist pixel_shuffle "
        "pixel_unshuffle prelu relu_ rrelu_ selu_ threshold_"
    ).split(),
}
_FUNCTIONAL_HOMES = {name: module for module, names in _C_FUNCTIONAL.items() for name in names}
# PyTorch's modules of built-in functions -> the modules that publish them too.
_BUILTIN_HOMES = {
    "torch._C._nn": "torch.nn.functional",
    "torch": "torch.nn.functional",
    "torch._C._VariableFunctions": "torch",
    "torch._C._special": "torch.special",
    "torch._C._linalg": "torch.linalg",
    "torch._C._fft": "torch.fft",
}


def is_tocha(module: str) -> bool:
    return module == "tocha" or module.startswith("tocha.")


def _public_module(obj, module: str, name: str) -> str:
    """Where `obj`, defined in `module`, is published: `module` itself unless a part of it
    is private, then the public twin of that part (``_functional`` -> ``functional``) or its
    parent, whichever holds `obj` under `name`."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_"):
            for candidate in (parts[:i] + [part.lstrip("_")], parts[:i]):
                home = sys.modules.get(".".join(candidate))
                if home is not None and getattr(home, name, None) is obj:
                    return ".".join(candidate)
            break
    return module


def torch_name(obj) -> str | None:
    """PyTorch's ``module.name`` for a tocha class or function; None for anything else (or a
    nested one, which is pickled under its own name)."""
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(name, str)) or not is_tocha(module):
        return None
    if "." in name:
        return None
    moved = _MOVED.get(f"{module}.{name}")
    if moved is not None:
        return moved
    module = "torch" + _public_module(obj, module, name)[len("tocha") :]
    if module == "torch.nn.functional":
        module = _FUNCTIONAL_HOMES.get(name, module)
    return f"{module}.{name}"


def torch_aliases(full: str) -> list[str]:
    """The names a checkpoint's global ``full`` may also be known by: PyTorch's built-in
    functions under the module that publishes them (``torch._C._nn.gelu`` is
    ``torch.nn.functional.gelu``)."""
    module, _, name = full.rpartition(".")
    home = _BUILTIN_HOMES.get(module)
    return [full] if home is None else [full, f"{home}.{name}"]


def tocha_object(full: str):
    """tocha's object for PyTorch's name `full` (``torch.nn.modules.linear.Linear``), found
    in tocha's twin module; the ImportError or AttributeError of the first name tried when
    tocha has none."""
    first = None
    for alias in torch_aliases(full):
        module, _, name = alias.rpartition(".")
        try:
            return getattr(importlib.import_module("tocha" + module[len("torch") :]), name)
        except (ImportError, AttributeError) as exc:
            first = first or exc
    raise first
