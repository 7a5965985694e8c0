"""``tocha.distributed.tensor.placement_types``, as ``torch.distributed.tensor.placement_types``:
how a tensor is laid out over one dimension of a device mesh (`Shard`, `Replicate`,
`Partial`). They are plain values: equal when their fields are, hashable, printable."""

from __future__ import annotations

__all__ = ["Placement", "Shard", "Replicate", "Partial"]  # and _StridedShard, as PyTorch


class Placement:
    """The base of the placements: which of them this is."""

    def is_shard(self, dim: int | None = None) -> bool:
        """Whether this is a `Shard` (of dimension `dim`, when given)."""
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        """Whether this is `Replicate`."""
        return isinstance(self, Replicate)

    def is_partial(self, reduce_op: str | None = None) -> bool:
        """Whether this is a `Partial` (reducing with `reduce_op`, when given)."""
        return isinstance(self, Partial) and (reduce_op is None or self.reduce_op == reduce_op)


class Shard(Placement):
    """Dimension `dim` of the tensor is split over the mesh dimension in `tocha.chunk`'s
    pieces: each rank holds one (the last ones may be shorter or empty)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"

    @staticmethod
    def local_shard_size_and_offset(
        curr_local_size: int, num_chunks: int, rank: int
    ) -> tuple[int, int]:
        """The size of rank `rank`'s piece of a dimension of `curr_local_size` elements split
        in `num_chunks`, and where it starts (`curr_local_size` for an empty piece)."""
        full_chunk = -(-curr_local_size // num_chunks)
        start = full_chunk * rank
        if start >= curr_local_size:
            return 0, curr_local_size
        return min(curr_local_size, start + full_chunk) - start, start


class _StridedShard(Shard):
    """`Shard` of dimension `dim` taken in `split_factor` strided groups (the layout that
    sharding an already sharded dimension again gives)."""

    def __init__(self, dim: int, split_factor: int) -> None:
        super().__init__(dim)
        self.split_factor = split_factor

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.dim == self.dim
            and other.split_factor == self.split_factor
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dim, self.split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self) -> str:
        return f"_S({self.dim}, {self.split_factor})"


class Replicate(Placement):
    """Every rank of the mesh dimension holds the whole tensor."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


class Partial(Placement):
    """Every rank holds a partial value; the tensor is their reduction by `reduce_op`."""

    def __init__(self, reduce_op: str = "sum") -> None:
        self.reduce_op = reduce_op

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.reduce_op == self.reduce_op

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.reduce_op))

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"
