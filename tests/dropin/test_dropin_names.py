"""Under the torch alias, reprs name the module ``torch`` as PyTorch's do: a program prints
``torch.Size([2, 3])`` and ``torch.float32``, and idioms that parse them
(``getattr(torch, str(dtype).split(".")[1])``, ``x.type() == "torch.FloatTensor"``) work.
Without the alias they say ``tocha``. The expected lines are PyTorch 2.13's output."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import tocha

PROGRAM = """
import torch
x = torch.ones(2, 3)
print(x.shape, x.dtype, x.type(), torch.float16, torch.int64)
print(str(x.dtype).replace("torch.", ""), getattr(torch, str(x.dtype).split(".")[1]))
print(x.double().type(), x.type(torch.int32).type(), x.type("torch.DoubleTensor").dtype)
print(repr(torch.Size([1, 2])), torch.FloatTensor)
import tocha.compat
tocha.compat.unalias_torch()
import tocha
print(tocha.float32, tocha.Size([1]))
"""

TORCH_LINES = [
    "torch.Size([2, 3]) torch.float32 torch.FloatTensor torch.float16 torch.int64",
    "float32 torch.float32",
    "torch.DoubleTensor torch.IntTensor torch.float64",
    "torch.Size([1, 2]) <class 'torch.FloatTensor'>",
]


def test_reprs_name_torch_under_the_alias(tmp_path):
    script = tmp_path / "names.py"
    script.write_text(textwrap.dedent(PROGRAM))
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == TORCH_LINES
    assert lines[4] == "tocha.float32 tocha.Size([1])"


def test_reprs_name_tocha_without_the_alias():
    x = tocha.ones(2)
    assert (repr(x.shape), repr(x.dtype), repr(tocha.FloatTensor)) == (
        "tocha.Size([2])",
        "tocha.float32",
        "<class 'tocha.FloatTensor'>",
    )
    assert x.type() == "torch.FloatTensor"  # PyTorch's name whatever the module is called
