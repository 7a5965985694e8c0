"""Record PyTorch's answers for tests/dropin/test_dropin_transformers.py: runs
tests/dropin/programs/dropin_hf.py with PyTorch, which writes each tiny model's weights to
tests/dropin/fixtures/<model>.safetensors, and writes what it printed (logits, losses,
gradient norms, greedy tokens) to tests/dropin/fixtures/hf_answers.json.

Run from the repository root with a Python that has torch, transformers and safetensors:
``/work/venv-torch/bin/python scripts/record_hf_fixtures.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "dropin" / "programs" / "dropin_hf.py"
ANSWERS = ROOT / "tests" / "dropin" / "fixtures" / "hf_answers.json"


def main() -> None:
    import torch
    import transformers

    proc = subprocess.run(
        [sys.executable, str(PROGRAM), "--write"], capture_output=True, text=True, check=True
    )
    answers = json.loads(proc.stdout.strip().splitlines()[-1])
    answers["recorded_with"] = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    ANSWERS.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
    models = sorted(set(answers) - {"recorded_with"})
    print(f"wrote {ANSWERS.relative_to(ROOT)} and the weights of {models}")


if __name__ == "__main__":
    main()
