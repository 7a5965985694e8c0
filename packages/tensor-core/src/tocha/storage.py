"""``tocha.storage``: the storage classes, as in ``torch.storage``."""

from __future__ import annotations

from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
