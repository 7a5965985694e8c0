"""tocha.testing, as ``torch.testing``."""

from typing import TYPE_CHECKING

__all__: list = []

# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
