"""Backend plugins: the base class a backend subclasses, the plugin API version it must be
built for, and `status`, which tells which backends are installed and loaded.

A backend is a distribution that declares an entry point in the ``tocha.backends`` group; the
entry point's name is the device type, its target a cheap ``register()`` function that
returns a `Backend`::

    [project.entry-points."tocha.backends"]
    mydev = "tocha_mydev:register"

A distribution may also bring faster kernels for ops of an existing device: a *kernel
provider*, declared in the ``tocha.kernels`` group, whose target returns a `KernelProvider`::

    [project.entry-points."tocha.kernels"]
    myprovider = "tocha_myprovider:register"

`kernel_providers` lists them, `set_kernel_provider_enabled` (or the environment variable
``TOCHA_KERNEL_PROVIDERS_DISABLE=name,...``) switches one off, and `provided_kernels` says
which provider serves each op.

The submodules `cpu`, `cuda`, `cudnn`, `mkldnn`, `mps` and `opt_einsum` hold the flags
PyTorch programs set (``tocha.backends.cudnn.benchmark = True``), as ``torch.backends``;
``mkldnn.enabled`` switches the ``onednn`` kernel provider.
"""

from .._backend import PLUGIN_API_VERSION, Backend, status
from . import cpu, cuda, cudnn, mkldnn, mps, opt_einsum
from ._providers import (
    KernelProvider,
    kernel_providers,
    provided_kernels,
    register_kernel_provider,
    set_kernel_provider_enabled,
    unregister_kernel_provider,
)

__all__ = [
    "Backend",
    "KernelProvider",
    "PLUGIN_API_VERSION",
    "kernel_providers",
    "provided_kernels",
    "register_kernel_provider",
    "set_kernel_provider_enabled",
    "status",
    "unregister_kernel_provider",
]
