"""``tocha.distributed.algorithms``: `Join` for uneven inputs (`join`) and DDP's
communication hooks (`ddp_comm_hooks`)."""

from .join import Join

__all__ = ["Join"]
