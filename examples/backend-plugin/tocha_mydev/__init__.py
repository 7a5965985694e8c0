"""An example backend plugin for tocha: NumPy arrays on a device of their own, ``mydev``.

The entry point `register` is cheap: the backend module (and tocha) is imported only when it
is called, the first time a ``mydev`` device is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tocha.backends import Backend


def register() -> Backend:
    """The ``tocha.backends`` entry point: a new mydev backend."""
    from ._backend import MyDevBackend

    return MyDevBackend()
