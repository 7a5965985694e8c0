"""A test kernel provider for tocha: it serves the test op ``testkernels_square`` on the CPU.

Its kernel counts its calls in `CALLS` and declines (hands to the built-in kernel) every call
whose input is not float32. The entry point `register` is cheap and imports nothing.
"""

import numpy as np

CALLS = []


class TestKernels:
    """The provider: tocha.backends.KernelProvider's attributes, written out."""

    api_version = 1
    name = "testkernels"
    device_type = "cpu"
    priority = 10
    ops = frozenset({"testkernels_square"})

    def kernel(self, op, fallback):
        def kernel(x):
            if x.dtype != np.float32:
                return fallback(x)
            CALLS.append(x.shape)
            return np.square(x)

        return kernel


def register():
    """The ``tocha.kernels`` entry point: the provider."""
    return TestKernels()
