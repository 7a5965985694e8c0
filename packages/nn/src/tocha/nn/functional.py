"""tocha.nn.functional: the functional form of every layer, as ``torch.nn.functional``.

The implementations live in ``tocha.nn._functional.<family>``; this module re-exports them.
"""

from typing import TYPE_CHECKING

# tocha-core's, as torch.pdist is torch.nn.functional.pdist.
from tocha import pdist  # noqa: F401

from ._functional.activation import *  # noqa: F403
from ._functional.attention import *  # noqa: F403
from ._functional.conv import *  # noqa: F403
from ._functional.dropout import *  # noqa: F403
from ._functional.linear import *  # noqa: F403
from ._functional.linear_pointwise import *  # noqa: F403
from ._functional.loss import *  # noqa: F403
from ._functional.normalization import *  # noqa: F403
from ._functional.padding import *  # noqa: F403
from ._functional.pooling import *  # noqa: F403
from ._functional.sampling import *  # noqa: F403

# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
