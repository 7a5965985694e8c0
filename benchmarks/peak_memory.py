"""Peak memory of training loops, tocha beside PyTorch (issue "tocha-nn": within 1.3x).

Each loop runs in a fresh interpreter; the figure is the growth of the peak resident set
(``ru_maxrss``) from just before the first step to the end of the loop, so the libraries'
own import footprints do not count.

    python benchmarks/peak_memory.py
"""

from __future__ import annotations

import subprocess
import sys

LOOP = r"""
import resource, sys
import numpy as np
lib_name, model_name = sys.argv[1], sys.argv[2]
if lib_name == "torch":
    import torch as lib
    lib.set_num_threads(1)
else:
    import tocha as lib
    import tocha.nn, tocha.optim  # noqa: F401
nn, F = lib.nn, lib.nn.functional
rng = np.random.default_rng(0)
if model_name == "mlp":
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    x = lib.from_numpy(rng.standard_normal((64, 784), dtype=np.float32))
else:
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 16 * 16, 10))
    x = lib.from_numpy(rng.standard_normal((32, 3, 32, 32), dtype=np.float32))
y = lib.from_numpy(rng.integers(0, 10, x.shape[0]))
opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(30):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024)
"""


def peak_growth_mb(lib: str, model: str) -> float | None:
    """The peak-RSS growth (MB) of 30 training steps of `model` in a fresh `lib` process."""
    run = subprocess.run(
        [sys.executable, "-c", LOOP, lib, model],
        capture_output=True,
        text=True,
        env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    if run.returncode != 0:
        return None
    return float(run.stdout.strip().splitlines()[-1])


def main() -> None:
    print(f"{'training loop':40s} {'tocha':>10s} {'torch':>10s} {'ratio':>8s}  goal")
    for model, label in (
        ("mlp", "MLP 784-256-128-10, batch 64, SGD"),
        ("conv", "Conv2d 3->16 3x3 + pool + linear, batch 32"),
    ):
        ours, theirs = peak_growth_mb("tocha", model), peak_growth_mb("torch", model)
        if ours is None or theirs is None:
            print(f"{label:40s} {ours!s:>10s} {theirs!s:>10s}       -  (torch not installed?)")
            continue
        ratio = ours / max(theirs, 1e-9)
        verdict = "ok" if ours <= 1.3 * theirs else "MISS"
        print(f"{label:40s} {ours:8.1f}MB {theirs:8.1f}MB {ratio:8.2f}  {verdict} <= 1.3x")


if __name__ == "__main__":
    main()
