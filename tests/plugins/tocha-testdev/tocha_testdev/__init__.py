"""A test backend for tocha: NumPy arrays on a device of their own, ``testdev``.

Installed by the tests to show that a third-party backend needs no change to tocha. The entry
point `register` is cheap: the backend module (and tocha) is imported only when it is called.
"""


def register():
    """The ``tocha.backends`` entry point: a new testdev backend."""
    from ._backend import TestDevBackend

    return TestDevBackend()
