"""Running programs written for PyTorch on tocha: `alias_torch` makes ``import torch`` and
``from torch.X import Y`` resolve to tocha, in the running interpreter.

The alias is a meta-path finder placed first on `sys.meta_path`: it answers for every
``torch.X`` with the module object ``tocha.X`` (imported if needed), so ``torch.X`` and
``tocha.X`` are the same objects however late either is imported. A ``torch.X`` that tocha
lacks raises ModuleNotFoundError naming it. ``python -m tocha.run SCRIPT`` (`tocha.run`)
runs a whole program this way.

``torch`` itself is a module that shares tocha's names (``torch.Tensor is tocha.Tensor``;
setting or deleting ``torch.X`` sets or deletes ``tocha.X``) with one difference, for the
libraries that check which PyTorch they run on: ``torch.__version__`` is the PyTorch version
whose API tocha follows, a `tocha.torch_version.TorchVersion` (``"2.13.0"``, which compares as
a version: ``torch.__version__ >= "2.6"``), while ``tocha.__version__`` stays tocha's own.
The finder also answers `importlib.metadata` for the distribution ``torch``: its version
(``importlib.metadata.version("torch")``) is that same PyTorch version, and its summary says
that tocha provides it.

Example:
    >>> import tocha.compat
    >>> tocha.compat.alias_torch()
    >>> import torch.nn as nn   # tocha.nn
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import sys
import types

from . import _dtype

__all__ = [
    "use_pytorch_random",
    "alias_torch",
    "unalias_torch",
    "is_aliased",
    "TorchAliasFinder",
    "TorchModule",
    "TorchDistribution",
]


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

    def get_code(self, fullname: str):
        """The tocha module's code, so that ``python -m torch.X`` (runpy) runs tocha.X."""
        return self.spec.loader.get_code(self.spec.name)


class TorchModule(types.ModuleType):
    """``torch`` under the alias: tocha's names (copied when it is made, looked up in tocha
    when missing) and PyTorch's version. Setting or deleting a name does so in tocha too."""

    def __init__(self, spec: importlib.machinery.ModuleSpec) -> None:
        import tocha
        import tocha.torch_version

        super().__init__("torch", tocha.__doc__)
        own = {
            "__spec__": spec,
            "__loader__": spec.loader,
            "__package__": "torch",
            "__path__": tocha.__path__,
            "__file__": tocha.__file__,
            "__version__": tocha.torch_version.__version__,
        }
        shared = {k: v for k, v in vars(tocha).items() if not _is_dunder(k)}
        vars(self).update(shared, **own)

    def __getattr__(self, name: str):
        import tocha

        try:
            value = getattr(tocha, name)
        except ModuleNotFoundError as exc:
            if name != "distributed" or exc.name != "tocha.distributed":
                raise
            value = _distributed_module()
        vars(self)[name] = value
        return value

    def __setattr__(self, name: str, value) -> None:
        if not _is_dunder(name):
            import tocha

            setattr(tocha, name, value)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if not _is_dunder(name):
            import tocha

            delattr(tocha, name)
        vars(self).pop(name, None)

    def __dir__(self) -> list[str]:
        import tocha

        return sorted(set(dir(tocha)) | set(vars(self)))


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class _TorchModuleLoader(importlib.abc.Loader):
    """Makes the `TorchModule` for ``import torch``."""

    def create_module(self, spec):
        return TorchModule(spec)

    def exec_module(self, module) -> None:
        pass


class TorchDistribution(importlib.metadata.Distribution):
    """The ``torch`` distribution's metadata under the alias: tocha provides PyTorch's API at
    the version `tocha.torch_version.__version__`. It lists no files."""

    def read_text(self, filename: str) -> str | None:
        import tocha
        from tocha.torch_version import __version__

        if filename == "METADATA":
            return (
                "Metadata-Version: 2.1\n"
                "Name: torch\n"
                f"Version: {__version__}\n"
                f"Summary: PyTorch's API, provided by tocha {tocha.__version__} "
                "(tocha.compat.alias_torch)\n"
            )
        if filename == "top_level.txt":
            return "torch\n"
        return None

    def locate_file(self, path):
        import pathlib

        import tocha

        return pathlib.Path(tocha.__file__).parent.parent / path


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """The meta-path finder behind `alias_torch`: ``torch.X`` is ``tocha.X``, ``torch`` a
    `TorchModule`, and the ``torch`` distribution a `TorchDistribution`."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname == "torch":
            import tocha

            spec = importlib.machinery.ModuleSpec("torch", _TorchModuleLoader(), is_package=True)
            spec.submodule_search_locations = list(tocha.__path__)
            return spec
        if not fullname.startswith("torch."):
            return None
        name = "tocha" + fullname[len("torch") :]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise
            module = _submodule_attribute(name)
            if module is None and exc.name == name == "tocha.distributed":
                module = _distributed_module()
            if module is None:
                message = _missing_message(exc.name, fullname)
                raise ModuleNotFoundError(message, name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), origin=None)

    def find_distributions(self, context=None):
        """The ``torch`` distribution, when `context` asks for it or for every one."""
        name = None if context is None else context.name
        if name is None or name.replace("_", "-").replace(".", "-").lower() == "torch":
            yield TorchDistribution()


def _submodule_attribute(name: str):
    """The module that tocha's module ``a.b`` holds as its attribute ``c`` for `name`
    ``a.b.c`` (``tocha.cuda.amp``), None when there is none."""
    parent, _, child = name.rpartition(".")
    value = vars(sys.modules[parent]).get(child) if parent in sys.modules else None
    return value if isinstance(value, types.ModuleType) else None


def _distributed_module():
    """``torch.distributed`` without tocha-distributed: its ``is_available()`` is False."""
    from tocha._unavailable_distributed import unavailable_distributed

    module = sys.modules.get("torch.distributed")
    if module is None:
        module = unavailable_distributed()
        module.__spec__ = importlib.machinery.ModuleSpec("torch.distributed", None)
    return module


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


def use_pytorch_random(enabled: bool = True) -> bool:
    """Make the CPU's random generators draw PyTorch's values for the same seed (or, with
    False, NumPy's faster PCG64 stream, tocha's default); returns the previous setting.

    With it, ``manual_seed(s)`` followed by ``rand``, ``randn``, ``randint``, ``randperm``,
    ``normal_``, ``uniform_``, ``bernoulli``, ``multinomial``, dropout or the ``nn.init``
    functions gives what PyTorch gives on the CPU (`tocha._cpu_random` says how), so a model
    built after a seed starts from PyTorch's weights. `alias_torch` (and so ``tocha.run``)
    turns it on unless ``TOCHA_PYTORCH_RANDOM=0`` is set; ``TOCHA_PYTORCH_RANDOM=1`` turns it
    on for every program. The default generators start their stream again from their seeds.
    """
    from ._cpu import CPUBackend
    from ._device import CPU
    from ._ops.random import restart_default_stream

    previous = CPUBackend.pytorch_random
    CPUBackend.pytorch_random = bool(enabled)
    if previous != CPUBackend.pytorch_random:
        restart_default_stream(CPU)
    return previous


_random_before_alias: list[bool] = []


def alias_torch() -> None:
    """Make ``import torch`` (and every ``torch.X``) give tocha from now on, in this
    interpreter (a notebook, a test), with the CPU's random values PyTorch's
    (`use_pytorch_random`, unless ``TOCHA_PYTORCH_RANDOM=0``). Modules that already imported
    the real PyTorch keep it: call this before, or RuntimeError says it is too late. While
    aliased, reprs name the module ``torch`` (``torch.float32``, ``torch.Size([2])``,
    ``x.type() == "torch.FloatTensor"``), as the program would print under PyTorch."""
    if is_aliased():
        return
    real = sys.modules.get("torch")
    if real is not None and not isinstance(real, TorchModule):
        raise RuntimeError(
            "torch is already imported in this interpreter: call tocha.compat.alias_torch() "
            "before the first `import torch` (or restart the interpreter)"
        )
    sys.meta_path.insert(0, _FINDER)
    _dtype.SHOWN_MODULE = "torch"
    if os.environ.get("TOCHA_PYTORCH_RANDOM") != "0":
        _random_before_alias.append(use_pytorch_random(True))


def unalias_torch() -> None:
    """Undo `alias_torch`: forget the ``torch`` modules it gave, stop answering for them, and
    put the random stream setting back."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    _dtype.SHOWN_MODULE = "tocha"
    if _random_before_alias:
        use_pytorch_random(_random_before_alias.pop())
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        module = sys.modules[name]
        if getattr(module, "__name__", "").startswith("tocha") or type(
            module
        ).__module__.startswith("tocha."):
            del sys.modules[name]
