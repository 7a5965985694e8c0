"""tocha._inductor: ``torch._inductor.config`` for programs that tune PyTorch's inductor
(``torch._inductor.config.coordinate_descent_tuning = True``). tocha's compiler has its own
code generation and reads none of these settings; they are kept so that such programs run."""

from __future__ import annotations

from . import config

__all__ = ["config"]
