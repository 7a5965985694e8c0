"""tocha.testing, as ``torch.testing``: `assert_close` (and the deprecated
`assert_allclose`) and `make_tensor`."""

from typing import TYPE_CHECKING

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
