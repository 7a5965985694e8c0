"""safetensors' PyTorch API (``safetensors.torch``) runs unchanged on tocha under the torch
alias: save_file / load_file / save / load of every dtype they share, save_model / load_model
with tied weights, and files that PyTorch wrote (tests/dropin/fixtures/*.safetensors) read
to the same values as safetensors' NumPy reader gives, as files tocha writes do."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("safetensors") is None,
    reason="safetensors is not installed (nox -s tests installs it)",
)

FIXTURE = Path(__file__).parent / "fixtures" / "gpt2.safetensors"

PROGRAM = """
import json, sys
import numpy as np
import torch
import torch.nn as nn
from safetensors.torch import load, load_file, load_model, save, save_file, save_model

folder = sys.argv[1]
out = {}
tensors = {
    "f32": torch.arange(6, dtype=torch.float32).reshape(2, 3) / 7,
    "f64": torch.linspace(-1, 1, 5, dtype=torch.float64),
    "f16": torch.tensor([0.5, -2.0], dtype=torch.float16),
    "bf16": torch.tensor([1.5, 3.0, -0.25], dtype=torch.bfloat16),
    "i64": torch.tensor([[1, -2], [3, 2**40]]),
    "i32": torch.tensor([7], dtype=torch.int32),
    "i16": torch.tensor([-3], dtype=torch.int16),
    "i8": torch.tensor([-1, 2], dtype=torch.int8),
    "u8": torch.tensor([250], dtype=torch.uint8),
    "bool": torch.tensor([True, False]),
    "f8": torch.tensor([0.5, 2.0]).to(torch.float8_e4m3fn),
    "empty": torch.zeros(0, 3),
    "view": torch.arange(12.0).reshape(3, 4)[:, 1].contiguous(),
}
save_file(tensors, f"{folder}/all.safetensors", metadata={"format": "pt"})
back = load_file(f"{folder}/all.safetensors")
out["roundtrip"] = {k: [str(v.dtype), list(v.shape), torch.equal(v, back[k].contiguous())]
                    for k, v in tensors.items()}
out["bytes"] = torch.equal(load(save(tensors))["bf16"], tensors["bf16"])

class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.head = nn.Linear(3, 5, bias=False)
        self.head.weight = self.emb.weight

torch.manual_seed(0)
model, fresh = Tied(), Tied()
save_model(model, f"{folder}/tied.safetensors")
missing, unexpected = load_model(fresh, f"{folder}/tied.safetensors")
same = torch.equal(fresh.emb.weight, model.emb.weight)
out["model"] = [sorted(missing), sorted(unexpected), same, fresh.head.weight is fresh.emb.weight]
gpt2 = load_file(sys.argv[2])
out["torch_file"] = {k: [str(v.dtype), float(v.double().sum())] for k, v in gpt2.items()}
print(json.dumps(out))
"""


def test_safetensors_torch_api_on_tocha(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(PROGRAM))
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script), str(tmp_path), str(FIXTURE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(same for _, _, same in out["roundtrip"].values()), out["roundtrip"]
    assert out["roundtrip"]["bf16"][0] == "torch.bfloat16" and out["bytes"]  # as PyTorch prints it
    assert out["model"] == [[], [], True, True]

    from safetensors import safe_open
    from safetensors.numpy import load_file as numpy_load

    with safe_open(str(tmp_path / "all.safetensors"), framework="np") as written:
        f32, view, i64 = (written.get_tensor(k) for k in ("f32", "view", "i64"))
    np.testing.assert_array_equal(f32, np.arange(6, dtype=np.float32).reshape(2, 3) / 7)
    np.testing.assert_array_equal(view, [1.0, 5.0, 9.0])
    np.testing.assert_array_equal(i64, [[1, -2], [3, 2**40]])
    from_torch = numpy_load(str(FIXTURE))
    assert set(out["torch_file"]) == set(from_torch)
    for name, (dtype, total) in out["torch_file"].items():
        assert dtype == "torch.float32"  # printed under the alias, as PyTorch prints it
        assert total == pytest.approx(float(from_torch[name].astype(np.float64).sum()), abs=1e-9)
