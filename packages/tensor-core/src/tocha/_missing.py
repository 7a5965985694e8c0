"""What tocha lacks, and where it comes from.

- `missing_attribute`: the error for a name that PyTorch has and tocha does not (yet). tocha's
  modules and subpackages raise it from their module ``__getattr__``, so a program written for
  PyTorch learns which ``torch.`` name it needs instead of failing deep inside tocha.
- The distribution tables: which ``tocha.<name>`` subpackage and which device backend come from
  which distribution, which top-level names a subpackage provides (``tocha.vmap``), and which
  folder of the monorepo holds each distribution. tocha's ``__getattr__``, `tocha.compat`, the
  backend registry and `MissingDistributionFinder` all read them here.
- `MissingDistributionFinder`: the last finder on `sys.meta_path` (``import tocha`` puts it
  there), so that ``import tocha.nn``, ``from tocha.nn import functional``... without tocha-nn
  raise a ModuleNotFoundError that names the distribution and how to install it.

This module is imported by ``import tocha``: it imports nothing but `sys`.
"""

from __future__ import annotations

import sys

__all__ = [
    "BACKENDS",
    "FOLDERS",
    "PROVIDED",
    "SUBPACKAGES",
    "MissingDistributionFinder",
    "install_finder",
    "install_hint",
    "missing_attribute",
    "missing_module",
    "not_installed",
]

# ``tocha.<name>`` -> the distribution that ships it. tocha-core's own are listed too: they are
# imported on first attribute access (``tocha.cuda``), as the others are.
SUBPACKAGES = {
    "autograd": "tocha-autograd",
    "nn": "tocha-nn",
    "optim": "tocha-optim",
    "func": "tocha-func",
    "fx": "tocha-fx",
    "jit": "tocha-fx",
    "export": "tocha-fx",
    "onnx": "tocha-onnx",
    "compiler": "tocha-compiler",
    "_dynamo": "tocha-compiler",
    "_inductor": "tocha-compiler",
    "distributions": "tocha-distributions",
    "multiprocessing": "tocha-mp",
    "utils": "tocha-utils",
    "distributed": "tocha-distributed",
    "futures": "tocha-distributed",
    "backends": "tocha-core",
    "cuda": "tocha-core",
    "cpu": "tocha-core",
    "random": "tocha-core",
    "hub": "tocha-core",
    "signal": "tocha-core",
    "accelerator": "tocha-core",
    "types": "tocha-core",
    "compat": "tocha-core",
    "functional": "tocha-core",
    "storage": "tocha-core",
    "mps": "tocha-core",
    "xpu": "tocha-core",
    "__config__": "tocha-core",
    "library": "tocha-core",
    "testing": "tocha-core",
    "profiler": "tocha-core",
    "sparse": "tocha-core",
}
# ``tocha.<name>`` functions that a subpackage provides (``tocha.vmap`` is ``tocha.func.vmap``,
# as ``torch.vmap`` is ``torch.func.vmap``) -> that subpackage (a dotted path under tocha),
# imported on first access. The neural-network functions whose top-level signature is
# nn.functional's come from tocha-nn; those whose signature differs are tocha-core's
# (tocha._ops.nn_entry), calling tocha-nn when called.
PROVIDED = {
    "vmap": "func",
    "is_anomaly_enabled": "autograd.anomaly_mode",
    "is_anomaly_check_nan_enabled": "autograd.anomaly_mode",
    "set_anomaly_enabled": "autograd.anomaly_mode",
    "GradScaler": "amp",
    "ModuleDict": "nn",
    "ParameterDict": "nn",
    **dict.fromkeys(
        (
            "adaptive_avg_pool1d",
            "bilinear",
            "celu",
            "celu_",
            "channel_shuffle",
            "conv1d",
            "conv2d",
            "conv3d",
            "conv_tbc",
            "conv_transpose1d",
            "conv_transpose2d",
            "conv_transpose3d",
            "cosine_similarity",
            "native_channel_shuffle",
            "pairwise_distance",
            "pixel_shuffle",
            "pixel_unshuffle",
            "prelu",
            "rms_norm",
            "rrelu",
            "rrelu_",
            "selu",
            "selu_",
            "threshold_",
        ),
        "nn.functional",
    ),
}
# Device type -> the distribution of its backend plugin (other device types come from plugins
# tocha does not know of).
BACKENDS = {"cuda": "tocha-cuda"}
# Distribution -> its folder under packages/ in a checkout of the monorepo.
FOLDERS = {
    "tocha-core": "tensor-core",
    "tocha-autograd": "autograd",
    "tocha-nn": "nn",
    "tocha-optim": "optim",
    "tocha-func": "func",
    "tocha-fx": "fx",
    "tocha-onnx": "onnx",
    "tocha-compiler": "compiler",
    "tocha-distributions": "distributions",
    "tocha-mp": "mp",
    "tocha-utils": "utils",
    "tocha-distributed": "distributed",
    "tocha-cuda": "cuda",
    "tocha-onednn": "onednn",
}


def missing_attribute(module: str, name: str) -> AttributeError:
    """The AttributeError for ``<module>.<name>``, naming ``torch.<...>.<name>``."""
    torch_module = "torch" + module[len("tocha") :] if module.startswith("tocha") else module
    return AttributeError(
        f"module {module!r} has no attribute {name!r}: {torch_module}.{name} is not in tocha yet"
    )


def install_hint(distribution: str) -> str:
    """How to install `distribution`: from an index, and from a checkout of the monorepo."""
    hint = f"pip install {distribution}"
    folder = FOLDERS.get(distribution)
    if folder is not None:
        hint += f" (from a checkout: pip install -e packages/{folder})"
    return hint


def not_installed(distribution: str) -> str:
    """``the distribution D, which is not installed: pip install D (from a checkout: ...)``."""
    return f"the distribution {distribution}, which is not installed: {install_hint(distribution)}"


def distribution_of(module: str) -> str | None:
    """The distribution other than tocha-core that ships ``tocha.<name>`` (`module`); None
    for any other module."""
    package, dot, name = module.partition(".")
    if package != "tocha" or not dot or "." in name:
        return None
    distribution = SUBPACKAGES.get(name)
    return None if distribution == "tocha-core" else distribution


def missing_module(module: str, shown: str | None = None) -> ModuleNotFoundError | None:
    """The ModuleNotFoundError for importing `module` (``tocha.<name>``) while its distribution
    is not installed, naming the module as `shown` (default: `module`); None when `module`
    is not one of the other distributions' subpackages."""
    distribution = distribution_of(module)
    if distribution is None:
        return None
    return ModuleNotFoundError(
        f"{shown or module} comes from {not_installed(distribution)}", name=module
    )


def _asked_by_an_import() -> bool:
    """Whether the import system is importing the module being looked for (an ``import``
    statement, ``importlib.import_module``), rather than a probe such as
    ``importlib.util.find_spec``, which must keep answering None for a missing module.

    Both reach the finders through importlib's ``_find_spec``; only an import calls it from
    ``_find_and_load_unlocked`` (CPython 3.10 to 3.13, checked by
    tests/core/test_missing_distributions.py). Were that to change, the answer would be no
    and a missing module would get Python's own message: never a wrong import."""
    frame = sys._getframe(2)  # skips this function and MissingDistributionFinder.find_spec
    while frame is not None and frame.f_code.co_name == "_find_spec":
        frame = frame.f_back
    return frame is not None and frame.f_code.co_name == "_find_and_load_unlocked"


class MissingDistributionFinder:
    """A meta path finder, last on `sys.meta_path`: it answers only for the subpackages of the
    tocha namespace that other distributions ship (`SUBPACKAGES`), and only once every other
    finder has failed to find one. An import of it then raises a ModuleNotFoundError (its
    ``name`` the module's) that names the distribution and how to install it; probes such as
    ``importlib.util.find_spec`` still get None."""

    def find_spec(self, fullname, path=None, target=None):
        error = missing_module(fullname)
        if error is None:
            return None
        # A finder added to sys.meta_path after this one (appended later) may still know it.
        meta_path = sys.meta_path
        after = meta_path.index(self) + 1 if self in meta_path else len(meta_path)
        for finder in meta_path[after:]:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(fullname, path, target) if find_spec is not None else None
            if spec is not None:
                return spec
        if not _asked_by_an_import():
            return None
        raise error

    def invalidate_caches(self) -> None:
        pass

    def __repr__(self) -> str:
        return "<tocha MissingDistributionFinder>"


def install_finder() -> None:
    """Append `MissingDistributionFinder` to `sys.meta_path` (once): the end, so that every
    installed distribution is found first."""
    if not any(isinstance(finder, MissingDistributionFinder) for finder in sys.meta_path):
        sys.meta_path.append(MissingDistributionFinder())
