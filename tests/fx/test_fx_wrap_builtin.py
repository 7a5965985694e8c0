"""``tocha.fx.wrap("len")``: a builtin kept as one call node. In a module of its own, since
wrapping changes what ``len`` means for the whole module while tracing."""

import numpy as np

import tocha
import tocha.fx
from tocha import nn

tocha.fx.wrap("len")


def test_wrapped_builtin_len_and_constant_arguments_in_code():
    class M(nn.Module):
        def forward(self, x):
            y = x.to(tocha.float64).contiguous(memory_format=tocha.contiguous_format)
            return y * len(x), x.new_zeros(2, device=tocha.device("cpu"))

    gm = tocha.fx.symbolic_trace(M())
    assert "len_1 = len(x)" in gm.code
    assert "to = x.to(tocha.float64)" in gm.code
    assert "memory_format = tocha.contiguous_format" in gm.code
    assert "device = device(type='cpu')" in gm.code
    scaled, zeros = gm(tocha.ones(3))
    assert scaled.dtype == tocha.float64
    np.testing.assert_allclose(scaled.numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(zeros.numpy(), [0.0, 0.0])
