"""Ready-made graph passes (``tocha.fx.passes.shape_prop``)."""

from . import shape_prop  # noqa: F401
