"""Backend plugins: the base class a backend subclasses, the plugin API version it must be
built for, and `status`, which tells which backends are installed and loaded.

A backend is a distribution that declares an entry point in the ``tocha.backends`` group; the
entry point's name is the device type, its target a cheap ``register()`` function that
returns a `Backend`::

    [project.entry-points."tocha.backends"]
    mydev = "tocha_mydev:register"

The submodules `cuda`, `cudnn` and `mps` hold the flags PyTorch programs set
(``tocha.backends.cudnn.benchmark = True``), as ``torch.backends``.
"""

from .._backend import PLUGIN_API_VERSION, Backend, status
from . import cuda, cudnn, mps

__all__ = ["Backend", "PLUGIN_API_VERSION", "status"]
