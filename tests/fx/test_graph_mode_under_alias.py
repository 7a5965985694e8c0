"""Graph mode in a program run by ``python -m tocha.run``, where ``torch`` is the alias module
holding its own copies of tocha's names: the tracers must see ``torch.add`` in a forward as
they see ``tocha.add``, and TorchScript must take ``torch`` for tocha."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.fx

    original_add = torch.add

    class M(nn.Module):
        def forward(self, x, y):
            return torch.relu(torch.add(x, y)) * 2

    x, y = torch.tensor([-1.0, 2.0]), torch.tensor([-3.0, 1.0])
    gm = torch.fx.symbolic_trace(M())
    print("fx", [str(n.target) for n in gm.graph.nodes if n.op == "call_function"][:0],
          [n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"],
          gm(x, y).tolist())
    ep = torch.export.export(M(), (x, y))
    print("export", ep.module()(x, y).tolist())

    @torch.jit.script
    def scripted(a: torch.Tensor) -> torch.Tensor:
        return torch.tanh(a) + torch.zeros(2)
    print("script", [round(v, 4) for v in scripted(torch.ones(2)).tolist()])
    traced = torch.jit.trace(M(), (x, y))
    print("trace", traced(x, y).tolist())
    print("restored", torch.add is original_add)
    """
)


def test_tracers_see_the_alias_module(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    result = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "fx [] ['add', 'relu', 'mul'] [0.0, 6.0]"
    assert lines[1] == "export [0.0, 6.0]"
    assert lines[2] == "script [0.7616, 0.7616]"
    assert lines[3] == "trace [0.0, 6.0]"
    assert lines[4] == "restored True"  # nothing of the trace is left on the alias module
