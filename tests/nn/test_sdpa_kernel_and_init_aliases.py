"""nn.attention's SDPBackend/sdpa_kernel and nn.init's deprecated spellings, as PyTorch's."""

from __future__ import annotations

import pytest

import tocha
import tocha.nn.functional as F
from tocha.nn.attention import SDPBackend, sdpa_kernel

FLAGS = tocha.backends.cuda


def _switches():
    return (
        FLAGS.math_sdp_enabled(),
        FLAGS.flash_sdp_enabled(),
        FLAGS.mem_efficient_sdp_enabled(),
        FLAGS.cudnn_sdp_enabled(),
    )


def test_backend_values():
    assert [(b.name, int(b)) for b in SDPBackend] == [
        ("ERROR", -1),
        ("MATH", 0),
        ("FLASH_ATTENTION", 1),
        ("EFFICIENT_ATTENTION", 2),
        ("CUDNN_ATTENTION", 3),
        ("OVERRIDEABLE", 4),
    ]
    assert str(SDPBackend.MATH) == "SDPBackend.MATH" and SDPBackend.MATH != 0


def test_sdpa_kernel_sets_and_restores_the_switches():
    assert _switches() == (True, True, True, True)
    q = tocha.randn(1, 2, 4, 8)
    expected = F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.MATH):
        assert _switches() == (True, False, False, False)
        assert tocha.equal(F.scaled_dot_product_attention(q, q, q), expected)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION], set_priority=True):
        assert _switches() == (False, True, False, True)
        assert tocha.equal(F.scaled_dot_product_attention(q, q, q), expected)
    assert _switches() == (True, True, True, True)


def test_no_cpu_kernel_left():
    q = tocha.randn(1, 1, 4, 8)
    with (
        sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION),
        pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention"),
    ):
        F.scaled_dot_product_attention(q, q, q)
    assert _switches() == (True, True, True, True)


def test_sdpa_kernel_refuses_other_types():
    with (
        pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"),
        sdpa_kernel("math"),
    ):
        pass


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("constant", (0.5,)),
        ("dirac", ()),
        ("eye", ()),
        ("kaiming_normal", ()),
        ("kaiming_uniform", ()),
        ("normal", ()),
        ("orthogonal", ()),
        ("sparse", (0.5,)),
        ("uniform", ()),
        ("xavier_normal", ()),
        ("xavier_uniform", ()),
    ],
)
def test_init_old_names_warn_and_fill_as_the_new_ones(name, args):
    t = tocha.empty(4, 4) if name != "dirac" else tocha.empty(2, 2, 3)
    u = t.clone()
    tocha.manual_seed(0)
    with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of"):
        assert getattr(tocha.nn.init, name)(t, *args) is t
    tocha.manual_seed(0)
    getattr(tocha.nn.init, f"{name}_")(u, *args)
    assert tocha.equal(t, u)
