"""``tocha.nn.attention``, as ``torch.nn.attention``: `flex_attention` (attention with a
score modification and a mask given as Python functions, ``tocha.nn.attention.flex_attention``)."""

__all__ = ["flex_attention"]
