"""Record torch.export's answers for the custom modules of tests/fx/test_export_torch_fixtures.py.

Run with PyTorch installed, from the repository root:
``/work/venv-torch/bin/python scripts/record_export_fixtures.py``. It writes
``tests/fx/fixtures/export_cases.json``: for each case, the graph signature's input specs
(``[kind, target, name]``) and output specs (``[kind, target]``), the names of its
``call_function`` nodes, the output specs of
``run_decompositions()``, the state_dict and constants keys, the weights (so that tocha's twin
computes the same numbers) and the outputs of ``ep.module()`` on the case's inputs.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "fx" / "test_export_torch_fixtures.py"
OUT = ROOT / "tests" / "fx" / "fixtures" / "export_cases.json"


def _cases():
    spec = importlib.util.spec_from_file_location("export_cases", TESTS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _array(t) -> dict:
    a = t.detach().numpy()
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _flat(v)]
    return [value]


def record(cases, name: str) -> dict:
    torch.manual_seed(0)
    model = cases.CASES[name](torch)[0]
    args, kwargs = cases.inputs(name, torch)
    weights = {k: _array(v) for k, v in model.state_dict(keep_vars=True).items()}
    ep = torch.export.export(model, args, kwargs)
    outputs = [o.detach().numpy().tolist() for o in _flat(ep.module()(*args, **kwargs))]
    decomposed = ep.run_decompositions()
    return {
        "input_specs": [
            [s.kind.name, s.target, s.arg.name] for s in ep.graph_signature.input_specs
        ],
        "output_specs": [[s.kind.name, s.target] for s in ep.graph_signature.output_specs],
        "decomposed_output_specs": [
            [s.kind.name, s.target] for s in decomposed.graph_signature.output_specs
        ],
        "nodes": [n.name for n in ep.graph.nodes if n.op == "call_function"],
        "state_dict": list(ep.state_dict),
        "constants": list(ep.constants),
        "weights": weights,
        "outputs": outputs,
    }


def main() -> None:
    cases = _cases()
    answers = {name: record(cases, name) for name in cases.CASES}
    OUT.write_text(json.dumps(answers, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(answers)} cases)")


if __name__ == "__main__":
    np.set_printoptions(precision=8)
    main()
