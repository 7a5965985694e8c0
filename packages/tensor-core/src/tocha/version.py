"""``tocha.version``, as ``torch.version``: the build that tocha's PyTorch API stands for.

`__version__` is the PyTorch version whose API tocha follows (a
`tocha.torch_version.TorchVersion`; tocha's own is ``tocha.__version__``). tocha is not
built against CUDA or ROCm (its CUDA backend is the tocha-cuda plugin, on CuPy): `cuda` and
`hip` are None, as in a CPU build of PyTorch.
"""

from __future__ import annotations

from .torch_version import __version__

__all__ = ["__version__", "cuda", "hip", "xpu", "debug", "git_version"]

cuda: str | None = None
hip: str | None = None
xpu: str | None = None
debug = False
git_version = "Unknown"
