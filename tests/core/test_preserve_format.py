"""clone and the *_like factories keep the input's memory layout, as PyTorch's default
``memory_format=torch.preserve_format`` does: a dense layout's strides (a transpose or a
permutation stays one), any other's dims ordered by stride; ``contiguous_format`` gives a
row-major result. Random values land in that memory order, as PyTorch draws them."""

from __future__ import annotations

import pytest

import tocha
from tocha.compat import use_pytorch_random

INPUTS = {
    "transposed": lambda lib: lib.zeros(4, 6).t(),
    "strided_slice": lambda lib: lib.zeros(4, 6)[:, ::2],
    "permuted": lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1),
    "expanded": lambda lib: lib.zeros(3, 1).expand(3, 4),
    "sliced_transposed": lambda lib: lib.zeros(4, 6)[:, ::2].t(),
}

MAKERS = {
    "clone": lambda lib, x: x.clone(),
    "empty_like": lambda lib, x: lib.empty_like(x),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x),
    "full_like": lambda lib, x: lib.full_like(x, 2.0),
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randint_like": lambda lib, x: lib.randint_like(x, 10),
    "clone_contiguous": lambda lib, x: x.clone(memory_format=lib.contiguous_format),
    "zeros_like_contiguous": lambda lib, x: lib.zeros_like(x, memory_format=lib.contiguous_format),
}


@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize("name", list(INPUTS))
def test_layout_matches_torch(torch, name, maker):
    ours = MAKERS[maker](tocha, INPUTS[name](tocha))
    theirs = MAKERS[maker](torch, INPUTS[name](torch))
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()


@pytest.mark.parametrize("maker", ["rand_like", "randint_like"])
def test_random_values_land_in_memory_order(torch, maker):
    previous = use_pytorch_random(True)
    try:
        tocha.manual_seed(0)
        ours = MAKERS[maker](tocha, INPUTS["transposed"](tocha)).tolist()
    finally:
        use_pytorch_random(previous)
    torch.manual_seed(0)
    assert ours == MAKERS[maker](torch, INPUTS["transposed"](torch)).tolist()


def test_a_clone_of_a_transpose_is_no_view_of_a_flat_shape():
    copy = tocha.zeros(3, 2).t().clone()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        copy.view(-1)
    assert copy.contiguous().view(-1).shape == (6,)
    assert copy.reshape(-1).shape == (6,)


def test_views_and_storage_of_a_permuted_copy_share_its_memory():
    """A clone of a transpose owns memory laid out in another order of dims: diagonal views
    and the storage still view that memory (they needed row-major memory before)."""
    copy = tocha.zeros(2, 5, 3).transpose(-1, -2).clone()
    copy.diagonal(dim1=-2, dim2=-1).copy_(tocha.ones(2, 3))
    assert copy.sum().item() == 6.0 and copy[0, 1, 1].item() == 1.0
    storage = copy.untyped_storage()
    assert storage.data_ptr() == copy.data_ptr() and storage.nbytes() == 30 * 4
