"""Peak memory of training, tocha beside PyTorch, within 1.3x of PyTorch's.

CPU (issue "tocha-nn"; the GPT block of benchmarks/cases_gpt.py, issue 27): each loop runs
in a fresh interpreter; the figure is the growth of the peak resident set (``ru_maxrss``) from
just before the first step to the end of the loop, so the libraries' own import footprints do
not count. Kernel libraries that load on first use (tocha-onednn's libdnnl, 17 MB, and
oneDNN's start-up with its first primitive, about 11 MB more; PyTorch's own lazy start-up)
load before that, in a no-grad forward of a few examples.

GPU (issue "tocha-cuda"): the training steps of benchmarks/cases_cuda.py, each in a fresh
interpreter: after a warm-up step, ``cuda.reset_peak_memory_stats()``, one step, then
``cuda.max_memory_allocated()`` (parameters, optimizer state and input included). A library
without a usable CUDA GPU shows n/a.

    python benchmarks/peak_memory.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIMIT = 1.3
WIDTH = 44

LOOP = r"""
import resource, sys
import numpy as np
lib_name, model_name, here = sys.argv[1], sys.argv[2], sys.argv[3]
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
elif model_name == "gpt":
    sys.path.insert(0, here)
    import cases_gpt
    gpt = cases_gpt.build(lib)
    model = gpt["layers"]
    x = lib.from_numpy(cases_gpt.tokens()[0])
else:
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 16 * 16, 10))
    x = lib.from_numpy(rng.standard_normal((32, 3, 32, 32), dtype=np.float32))
y = lib.from_numpy(rng.integers(0, 10, x.shape[0]))
opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
with lib.no_grad():  # kernel libraries that load on first use start up here (not counted)
    cases_gpt.block(lib, gpt, x[:1]) if model_name == "gpt" else model(x[:8])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(3 if model_name == "gpt" else 30):
    opt.zero_grad()
    if model_name == "gpt":
        cases_gpt.block(lib, gpt, x).square().mean().backward()
    else:
        F.cross_entropy(model(x), y).backward()
    opt.step()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024)
"""

LIBS = ("tocha", "torch")
# One training step of benchmarks/cases_cuda.py: argv = library, model, benchmarks folder.
GPU_STEP = r"""
import importlib, sys
lib_name, model_name, here = sys.argv[1:4]
sys.path.insert(0, here)
import cases_cuda
lib = importlib.import_module(lib_name)
if not lib.cuda.is_available():
    sys.exit("no CUDA GPU")
model, opt, x = cases_cuda.TRAINING[model_name](lib)
cases_cuda.train_step(lib, model, opt, x)
lib.cuda.synchronize()
lib.cuda.reset_peak_memory_stats()
cases_cuda.train_step(lib, model, opt, x)
lib.cuda.synchronize()
print(lib.cuda.max_memory_allocated() / 2**20)
"""


def peak_growth_mb(lib: str, model: str) -> float | None:
    """The peak-RSS growth (MB) of 30 training steps of `model` (3 of the GPT block) in a fresh
    `lib` process."""
    run = subprocess.run(
        [sys.executable, "-c", LOOP, lib, model, str(HERE)],
        capture_output=True,
        text=True,
        env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    if run.returncode != 0:
        return None
    return float(run.stdout.strip().splitlines()[-1])


def gpu_peak_mb(lib: str, model: str) -> tuple[float | None, str]:
    """The peak GPU memory allocated (MB) by one training step of cases_cuda's `model` in a
    fresh `lib` process; None and why not (its last line of errors) when it cannot run."""
    run = subprocess.run(
        [sys.executable, "-c", GPU_STEP, lib, model, str(HERE)],
        capture_output=True,
        text=True,
        env=os.environ,  # all of it: CUDA_VISIBLE_DEVICES, the CUDA libraries' paths, HOME
    )
    if run.returncode != 0:
        return None, (run.stderr.strip().splitlines() or ["failed"])[-1]
    return float(run.stdout.strip().splitlines()[-1]), ""


def print_row(label: str, ours: float | None, theirs: float | None, why: str) -> None:
    """One row: tocha's and PyTorch's figures, their ratio and the verdict; n/a and `why`
    when either is missing."""
    if ours is None or theirs is None:
        shown = ["n/a" if mb is None else f"{mb:.1f}MB" for mb in (ours, theirs)]
        print(f"{label:{WIDTH}s} {shown[0]:>10s} {shown[1]:>10s} {'-':>8s}  ({why})")
        return
    ratio = ours / max(theirs, 1e-9)
    verdict = "ok" if ours <= LIMIT * theirs else "MISS"
    print(f"{label:{WIDTH}s} {ours:8.1f}MB {theirs:8.1f}MB {ratio:8.2f}  {verdict} <= {LIMIT}x")


def print_header(title: str) -> None:
    """The header of a section's table."""
    print(f"{title:{WIDTH}s} {'tocha':>10s} {'torch':>10s} {'ratio':>8s}  goal")


def cpu_section() -> None:
    """The CPU training loops: peak-RSS growth."""
    print_header("CPU training loop (peak RSS growth)")
    for model, label in (
        ("mlp", "MLP 784-256-128-10, batch 64, SGD"),
        ("conv", "Conv2d 3->16 3x3 + pool + linear, batch 32"),
        ("gpt", "ng-video GPT block d 384, 16 x 256, SGD"),
    ):
        ours, theirs = peak_growth_mb("tocha", model), peak_growth_mb("torch", model)
        print_row(label, ours, theirs, "torch not installed?")


def gpu_section() -> None:
    """The GPU training steps: peak memory allocated."""
    print_header("GPU training step (peak allocated)")
    for model, label in (
        ("mlp", "MLP 1024-4096-1024, batch 256, Adam"),
        ("transformer", "TransformerEncoderLayer 512, 32x128, AdamW"),
    ):
        peaks = {lib: gpu_peak_mb(lib, model) for lib in LIBS}
        why = "; ".join(f"{lib}: {why}" for lib, (_, why) in peaks.items() if why)
        print_row(label, peaks["tocha"][0], peaks["torch"][0], why)


def main() -> None:
    cpu_section()
    print()
    gpu_section()


if __name__ == "__main__":
    main()
