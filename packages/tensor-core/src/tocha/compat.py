"""Running programs written for PyTorch on tocha: `alias_torch` makes ``import torch`` and
``from torch.X import Y`` resolve to tocha, in the running interpreter.

The alias is a meta-path finder placed first on `sys.meta_path`: it answers for ``torch``
and every ``torch.X`` with the module object ``tocha.X`` (imported if needed), so ``torch.X``
and ``tocha.X`` are the same objects however late either is imported. A ``torch.X`` that
tocha lacks raises ModuleNotFoundError naming it. ``python -m tocha.run SCRIPT`` (`tocha.run`)
runs a whole program this way.

Example:
    >>> import tocha.compat
    >>> tocha.compat.alias_torch()
    >>> import torch.nn as nn   # tocha.nn
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

__all__ = ["alias_torch", "unalias_torch", "is_aliased", "TorchAliasFinder"]


def torch_name(name: str) -> str:
    """``torch.X`` for ``tocha.X`` (and ``torch`` for ``tocha``)."""
    return "torch" + name[len("tocha") :]


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system an already imported tocha module for a ``torch.X`` name."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        # The import system set the module's __spec__ to the alias's: give it back its own.
        module.__spec__ = self.spec


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """The meta-path finder behind `alias_torch`: ``torch[.X]`` is ``tocha[.X]``."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        name = "tocha" + fullname[len("torch") :]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise
            raise ModuleNotFoundError(_missing_message(exc.name, fullname), name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), origin=None)


def _missing_message(missing: str, fullname: str) -> str:
    """Why ``import <fullname>`` fails when the tocha module `missing` does not exist."""
    from tocha._missing import missing_module

    error = missing_module(missing, shown=torch_name(missing))
    if error is not None:
        return str(error)
    return f"{torch_name(missing)} is not in tocha yet (the program imports {fullname})"


_FINDER = TorchAliasFinder()


def is_aliased() -> bool:
    """Whether ``import torch`` gives tocha in this interpreter."""
    return _FINDER in sys.meta_path


def alias_torch() -> None:
    """Make ``import torch`` (and every ``torch.X``) give tocha from now on, in this
    interpreter (a notebook, a test). Modules that already imported the real PyTorch keep it:
    call this before, or RuntimeError says it is too late."""
    if is_aliased():
        return
    real = sys.modules.get("torch")
    if real is not None and not getattr(real, "__name__", "").startswith("tocha"):
        raise RuntimeError(
            "torch is already imported in this interpreter: call tocha.compat.alias_torch() "
            "before the first `import torch` (or restart the interpreter)"
        )
    sys.meta_path.insert(0, _FINDER)


def unalias_torch() -> None:
    """Undo `alias_torch`: forget the ``torch`` modules it gave, stop answering for them."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        if getattr(sys.modules[name], "__name__", "").startswith("tocha"):
            del sys.modules[name]
