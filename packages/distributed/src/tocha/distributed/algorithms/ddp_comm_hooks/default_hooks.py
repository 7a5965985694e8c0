"""The built-in DDP communication hooks: `allreduce_hook` (what DDP does without a hook),
`fp16_compress_hook` and `bf16_compress_hook` (all-reduce in a half-precision copy, to send
half the bytes). Register one with
``ddp.register_comm_hook(process_group_or_None, hook)``."""

from __future__ import annotations

import tocha

from ... import _collectives
from ..._group import get_world_size

__all__ = ["allreduce_hook", "bf16_compress_hook", "fp16_compress_hook"]


def _allreduce_mean(group, tensor: tocha.Tensor):
    tensor.div_(get_world_size(group))
    work = _collectives.all_reduce(tensor, group=group, async_op=True)
    return work.get_future()


def allreduce_hook(process_group, bucket):
    """Average the bucket over the ranks of `process_group` (None: the default group)."""
    return _allreduce_mean(process_group, bucket.buffer()).then(lambda fut: fut.value()[0])


def _compress_hook(dtype):
    def hook(process_group, bucket):
        buffer = bucket.buffer()
        compressed = buffer.to(dtype)

        def decompress(fut):
            buffer.copy_(fut.value()[0])
            return buffer

        return _allreduce_mean(process_group, compressed).then(decompress)

    return hook


fp16_compress_hook = _compress_hook(tocha.float16)
fp16_compress_hook.__name__ = fp16_compress_hook.__qualname__ = "fp16_compress_hook"
fp16_compress_hook.__doc__ = """Average the bucket in a float16 copy (half the bytes)."""
bf16_compress_hook = _compress_hook(tocha.bfloat16)
bf16_compress_hook.__name__ = bf16_compress_hook.__qualname__ = "bf16_compress_hook"
bf16_compress_hook.__doc__ = """Average the bucket in a bfloat16 copy (half the bytes)."""
