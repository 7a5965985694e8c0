"""``torch.Tag``: the tags an operator's definition may carry (``tags=`` of `custom_op` and
`Library.define`), read back as ``OpOverload.tags``."""

from __future__ import annotations

import enum

from ._api import export

__all__ = ["Tag", "tags_of"]

Tag = enum.Enum(
    "Tag",
    [
        (name, value)
        for value, name in enumerate(
            "core cudagraph_unsafe data_dependent_output dynamic_output_shape flexible_layout "
            "generated inplace inplace_view maybe_aliasing_or_mutating needs_contiguous_strides "
            "needs_exact_strides needs_fixed_stride_order nondeterministic_bitwise "
            "nondeterministic_seeded out out_variant pointwise pt2_compliant_tag reduction "
            "view_copy".split()
        )
    ],
    module="torch",
)
Tag.__doc__ = "The tags of an operator (``Tag.pointwise``, ``Tag.needs_fixed_stride_order``...)."
export(Tag, "Tag")


def tags_of(tags) -> list:
    """`tags` (one Tag, a sequence of them, or None) as a list."""
    if tags is None:
        return []
    if isinstance(tags, Tag):
        return [tags]
    return list(tags)
