"""What libraries ask the torch alias before they use it: ``importlib.metadata`` for the
``torch`` distribution, ``torch.__version__`` (the PyTorch version tocha follows, while
``tocha.__version__`` stays tocha's), the module ``torch`` sharing tocha's names,
``import torch.cuda.amp``, and ``torch.distributed.is_available()`` answering False when
tocha-distributed is not installed. Each case runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap


def run(code: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_metadata_and_version_under_the_alias():
    out = run("""
        import importlib.metadata, json
        import tocha, tocha.compat
        tocha.compat.alias_torch()
        import torch
        dist = importlib.metadata.distribution("torch")
        names = [d.metadata["Name"] for d in importlib.metadata.distributions()]
        print(json.dumps({
            "version": importlib.metadata.version("torch"),
            "summary": dist.metadata["Summary"],
            "listed": "torch" in names,
            "torch": [torch.__version__, type(torch.__version__).__name__],
            "tocha": tocha.__version__,
            "compares": [torch.__version__ >= "2.6", torch.__version__ < (3, 0)],
            "module_version": torch.version.__version__,
            "files": dist.files,
        }))
    """)
    assert out["version"] == "2.13.0" and out["torch"] == ["2.13.0", "TorchVersion"]
    assert out["tocha"] == "0.1.0" and out["compares"] == [True, True] and out["listed"]
    assert "tocha" in out["summary"] and out["module_version"] == "2.13.0"
    assert out["files"] is None


def test_torch_shares_tochas_names():
    out = run("""
        import json
        import tocha, tocha.compat
        tocha.compat.alias_torch()
        import torch, torch.cuda.amp
        from torch.cuda.amp import autocast
        torch.my_flag = 3
        shared = [torch.Tensor is tocha.Tensor, torch.nn is tocha.nn, tocha.my_flag == 3,
                  torch.cuda.amp is tocha.cuda.amp, "zeros" in dir(torch)]
        del torch.my_flag
        try:
            torch.no_such_name
        except AttributeError as exc:
            missing = str(exc)
        tocha.compat.unalias_torch()
        import sys
        print(json.dumps({"shared": shared, "gone": hasattr(tocha, "my_flag"), "missing": missing,
                          "unaliased": "torch" in sys.modules}))
    """)
    assert out["shared"] == [True] * 5 and not out["gone"] and not out["unaliased"]
    assert "torch.no_such_name is not in tocha yet" in out["missing"]


def test_distributed_is_unavailable_without_tocha_distributed():
    out = run("""
        import json, sys

        class Hide:
            def __init__(self, finder):
                self.finder = finder

            def find_spec(self, name, path=None, target=None):
                if name == "tocha.distributed" or name.startswith("tocha.distributed."):
                    return None
                find_spec = getattr(self.finder, "find_spec", None)
                return None if find_spec is None else find_spec(name, path, target)

        sys.meta_path[:] = [Hide(f) for f in sys.meta_path]
        import tocha.compat
        tocha.compat.alias_torch()
        import torch
        import torch.distributed as dist
        try:
            dist.all_reduce
        except AttributeError as exc:
            missing = str(exc)
        print(json.dumps({"attribute": torch.distributed.is_available(),
                          "imported": dist.is_available(), "same": dist is torch.distributed,
                          "missing": missing, "has": hasattr(dist, "init_process_group")}))
    """)
    assert out["attribute"] is False and out["imported"] is False and out["same"]
    assert "tocha-distributed, which is not installed" in out["missing"] and not out["has"]


def test_help_says_what_libraries_see():
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.startswith("usage: python -m tocha.run")
    assert "Libraries see PyTorch 2.13.0 installed" in proc.stdout
    assert "importlib.metadata" in proc.stdout and "tocha.__version__ stays" in proc.stdout
    assert "are PyTorch's values; TOCHA_PYTORCH_RANDOM=0" in proc.stdout


def test_tocha_run_draws_pytorch_values_unless_told_not_to(tmp_path):
    program = tmp_path / "draw.py"
    program.write_text(
        "import torch\ntorch.manual_seed(0)\nprint(torch.randint(0, 10, (8,)).tolist())\n"
    )
    run = [sys.executable, "-m", "tocha.run", str(program)]
    pytorch = subprocess.run(run, capture_output=True, text=True, timeout=60).stdout.strip()
    assert pytorch == "[4, 9, 3, 0, 3, 9, 7, 3]"  # torch.randint after manual_seed(0)
    env = dict(os.environ, TOCHA_PYTORCH_RANDOM="0")
    own = subprocess.run(run, capture_output=True, text=True, timeout=60, env=env).stdout.strip()
    assert own.startswith("[") and own != pytorch


def test_compiler_names_libraries_use_at_import():
    """transformers decorates with these while it imports (tocha-compiler provides them)."""
    out = run("""
        import json
        import tocha.compat
        tocha.compat.alias_torch()
        import torch

        @torch.compiler.disable(recursive=False)
        def eager(x):
            return x + 1

        @torch._dynamo.assume_constant_result
        def constant():
            return 3

        print(json.dumps([eager(1), constant(), torch._dynamo.allow_in_graph(len)("ab"),
                          torch.compiler.is_compiling(), eager.__name__]))
    """)
    assert out == [2, 3, 2, False, "eager"]
