"""DDP communication hooks, as ``torch.distributed.algorithms.ddp_comm_hooks``: the
`default_hooks` (plain, float16 and bfloat16 all-reduce)."""

from . import default_hooks

__all__ = ["default_hooks"]
