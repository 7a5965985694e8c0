"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``.

A `PackedSequence` holds a batch of sequences of different lengths without padding: ``data``
stacks the time steps one after the other, each holding the sequences still running at that
step (longest first), ``batch_sizes[t]`` of them.

Packing and padding are one ``index_select`` each (rows picked from the data, or from one
extra row of padding), so gradients flow through them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

import tocha
from tocha import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """A batch of variable-length sequences, packed (see the module's docstring).

    Make one with `pack_padded_sequence` or `pack_sequence`, not by hand.

    Attributes:
        data: ``(sum(lengths), *)`` the packed time steps.
        batch_sizes: CPU int64, the number of sequences running at each time step.
        sorted_indices: how the batch was sorted by decreasing length (None if it was
            already).
        unsorted_indices: the inverse permutation of `sorted_indices`.
    """

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """`data` moved or cast as ``Tensor.to``; the indices follow data's device,
        batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [
            None if t is None else t.to(data.device)
            for t in (self.sorted_indices, self.unsorted_indices)
        ]
        return type(self)(data, self.batch_sizes, *indices)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, device=None) -> PackedSequence:
        return self.to("cuda" if device is None else device)

    def double(self) -> PackedSequence:
        return self.to(dtype=tocha.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=tocha.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=tocha.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=tocha.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=tocha.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=tocha.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=tocha.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=tocha.uint8)

    def is_pinned(self) -> bool:
        """Whether `data` is in pinned memory."""
        return self.data.is_pinned()

    def pin_memory(self) -> PackedSequence:
        """A copy with `data` and the indices in pinned memory."""
        indices = [
            None if t is None else t.pin_memory()
            for t in (self.sorted_indices, self.unsorted_indices)
        ]
        return type(self)(self.data.pin_memory(), self.batch_sizes, *indices)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (None for None)."""
    if permutation is None:
        return None
    return tocha.empty_like(permutation).scatter_(
        0, permutation, tocha.arange(permutation.numel(), device=permutation.device)
    )


def _lengths_tensor(lengths) -> Tensor:
    if isinstance(lengths, Tensor):
        if lengths.device.type != "cpu" or lengths.dim() != 1:
            raise RuntimeError(
                "'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.dim()}D {lengths.device} {lengths.dtype} tensor"
            )
        return lengths.to(dtype=tocha.int64)
    return tocha.as_tensor(lengths, dtype=tocha.int64, device="cpu")


def _pick_rows(rows: Tensor, index: np.ndarray, shape: tuple, padding_value=None) -> Tensor:
    """``rows[index]`` reshaped to `shape`; index ``len(rows)`` picks a row of
    `padding_value`."""
    if padding_value is not None:
        pad = tocha.full((1, *rows.shape[1:]), padding_value, dtype=rows.dtype, device=rows.device)
        rows = tocha.cat([rows, pad])
    index = tocha.from_numpy(index).to(rows.device)
    return rows.index_select(0, index).reshape(shape)


def _time_major_index(lengths: list, steps: int, batch: int, batch_first: bool) -> np.ndarray:
    """Row of the flattened padded ``(T, B)`` (or ``(B, T)``) batch of each packed step."""
    t, b = np.nonzero(np.arange(steps)[:, None] < np.asarray(lengths)[None, :])
    return b * steps + t if batch_first else t * batch + b


def pack_padded_sequence(
    input: Tensor, lengths, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if `batch_first`) of sequences of
    the given lengths.

    With `enforce_sorted` the lengths must be non-increasing; otherwise the batch is sorted
    here and the permutation kept in the result.

    Example:
        >>> pack_padded_sequence(tocha.zeros(3, 2, 4), [3, 1]).batch_sizes
        tensor([2, 1, 1])
    """
    lengths = _lengths_tensor(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = tocha.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices.to(input.device))
    values = lengths.tolist()
    batch = input.shape[0 if batch_first else 1]
    if len(values) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{len(values)} (batch_size={batch})"
        )
    if values and values[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an "
            "element in 'lengths' that is <= 0"
        )
    if any(a < b for a, b in zip(values, values[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability."
        )
    steps = input.shape[1 if batch_first else 0]
    if values[0] > steps:
        raise RuntimeError(
            f"Expected the lengths to be at most the padded length {steps}, "
            f"but got a length of {values[0]}"
        )
    index = _time_major_index(values, steps, batch, batch_first)
    feature = tuple(input.shape[2:])
    data = _pick_rows(input.reshape(-1, *feature), index, (len(index), *feature))
    batch_sizes = tocha.from_numpy(
        (np.arange(values[0])[:, None] < np.asarray(values)[None, :]).sum(1)
    )
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The inverse of `pack_padded_sequence`: ``(padded, lengths)``, padded ``(T, B, *)``
    (``(B, T, *)`` if `batch_first`) with ``T = total_length`` or the longest length."""
    batch_sizes = sequence.batch_sizes.tolist()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    batch = batch_sizes[0]
    lengths = (np.asarray(batch_sizes)[:, None] > np.arange(batch)[None, :]).sum(0)
    data = sequence.data
    index = np.full(steps * batch, data.shape[0])
    index[_time_major_index(lengths, steps, batch, batch_first)] = np.arange(data.shape[0])
    shape = (batch, steps) if batch_first else (steps, batch)
    padded = _pick_rows(data, index, (*shape, *data.shape[1:]), padding_value)
    lengths = tocha.from_numpy(lengths.astype(np.int64))
    unsorted = sequence.unsorted_indices
    if unsorted is None:
        return padded, lengths
    return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]


def pad_sequence(
    sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """Stack sequences ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` if
    `batch_first`), padded with `padding_value` on the right or the left."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg "
            f"of type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    feature = tuple(sequences[0].shape[1:])
    for seq in sequences:
        for k, (a, b) in enumerate(zip(feature, seq.shape[1:])):
            if a != b:
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor "
                    f"b ({b}) at non-singleton dimension {k + 1}"
                )
    lengths = np.array([len(seq) for seq in sequences])
    steps, batch = int(lengths.max()), len(sequences)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    t = np.arange(steps)[:, None]
    if padding_side == "left":
        t = t - (steps - lengths)[None, :]
    valid = (t >= 0) & (t < lengths[None, :])
    index = np.where(valid, starts[None, :] + t, lengths.sum())
    if batch_first:
        index = index.T
    shape = (batch, steps) if batch_first else (steps, batch)
    return _pick_rows(tocha.cat(sequences), index.ravel(), (*shape, *feature), padding_value)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length (the inverse of
    `pad_sequence`)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (longest first unless not `enforce_sorted`)."""
    lengths = tocha.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a `PackedSequence` holds (the inverse of `pack_sequence`)."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
