"""einops runs unchanged on tocha under the torch alias: its functions on tensors give what
they give on NumPy arrays (einops' NumPy backend, in the same program: this process may
have PyTorch hidden), and ``einops.layers.torch``'s layers
(Rearrange, Reduce, EinMix) train in an ``nn.Sequential``, with gradients equal to the
same model written without einops."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("einops") is None,
    reason="einops is not installed (nox -s tests installs it)",
)

PROGRAM = """
import json
import numpy as np
import torch
import torch.nn as nn
import einops
from einops import einsum, pack, rearrange, reduce, repeat, unpack
from einops.layers.torch import EinMix, Rearrange, Reduce

x = torch.tensor(np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6) / 10)
out = {
    "rearrange": rearrange(x, "b c (h h2) (w w2) -> b (h w) (c h2 w2)", h2=2, w2=3).tolist(),
    "reduce_max": reduce(x, "b c h w -> b c", "max").tolist(),
    "reduce_mean": reduce(x, "b c (h 2) w -> b c h", "mean").tolist(),
    "repeat": repeat(x[0, 0, 0], "w -> r w", r=2).tolist(),
    "einsum": einsum(x, x, "b c h w, b c h w -> b c").tolist(),
    "backend": type(einops._backends.get_backend(x)).__name__,
}
packed, shapes = pack([x[0], x[1, 0]], "* h w")
out["pack"] = [list(packed.shape), [list(s) for s in shapes]]
out["unpack"] = [list(t.shape) for t in unpack(packed, shapes, "* h w")]

torch.manual_seed(0)
model = nn.Sequential(
    Rearrange("b c h w -> b h w c"),
    EinMix("b h w c -> b h w d", weight_shape="c d", bias_shape="d", c=3, d=5),
    Reduce("b h w d -> b d", "mean"),
)
loss = model(x).square().sum()
loss.backward()
mix = model[1]
plain = (x.permute(0, 2, 3, 1) @ mix.weight.detach() + mix.bias.detach()).mean(dim=(1, 2))
out["layers"] = [float(loss), float(plain.square().sum()), mix.weight.grad.shape == (3, 5)]
w = mix.weight.detach().clone().requires_grad_(True)
(x.permute(0, 2, 3, 1) @ w + mix.bias.detach()).mean(dim=(1, 2)).square().sum().backward()
out["grads_equal"] = bool(torch.allclose(w.grad, mix.weight.grad, rtol=1e-4, atol=1e-3))

a = x.numpy()  # the same calls on a NumPy array: einops' NumPy backend, the reference
out["numpy"] = {
    "rearrange": rearrange(a, "b c (h h2) (w w2) -> b (h w) (c h2 w2)", h2=2, w2=3).tolist(),
    "reduce_max": reduce(a, "b c h w -> b c", "max").tolist(),
    "reduce_mean": reduce(a, "b c (h 2) w -> b c h", "mean").tolist(),
    "repeat": repeat(a[0, 0, 0], "w -> r w", r=2).tolist(),
    "einsum": einsum(a, a, "b c h w, b c h w -> b c").tolist(),
}
print(json.dumps(out))
"""


def test_einops_on_tocha(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(PROGRAM))
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])

    for key, value in out["numpy"].items():
        np.testing.assert_allclose(out[key], value, rtol=1e-6, err_msg=key)
    assert out["backend"] == "TorchBackend"
    assert out["pack"] == [[4, 4, 6], [[3], []]] and out["unpack"] == [[3, 4, 6], [4, 6]]
    loss, plain, grad_shape = out["layers"]
    assert loss == pytest.approx(plain, rel=1e-6) and grad_shape and out["grads_equal"]
