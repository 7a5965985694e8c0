"""Run the benchmarks: tocha beside PyTorch (when installed) and the NumPy floor, in one run.

    python benchmarks/run.py [--quick] [--threads N] [--filter TEXT] [--json PATH]
                             [--default-malloc]

Prints one row per case: the time per call of tocha, PyTorch and NumPy, the ratios
tocha/torch and tocha/numpy, and whether the case meets its goal. A case whose tocha op does
not exist yet shows "n/a" and the reason below the table. A full run (no --quick, no --filter)
writes the table to benchmarks/results.json with the machine, keeping the runs with other
thread counts made on the same machine; --json PATH writes any run to PATH.

torch runs in a child process (torch_worker.py), and this one never imports it: its OpenMP
and the GNU OpenMP of tocha-onednn contend when both live in one process (a 2-thread GPT
block was seen 8x slower). Both processes have glibc keep freed memory for reuse
(`harness.keep_freed_memory`, what ``TOCHA_MALLOC_TUNING=1`` and ``python -m tocha.run`` do
for tocha), so that figures do not depend on what earlier cases left in the heap;
--default-malloc leaves glibc's defaults, as a plain ``import tocha`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import harness
from torch_worker import TorchWorker

RESULTS = Path(__file__).resolve().parent / "results.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few loops: a smoke run for CI")
    parser.add_argument(
        "--threads", type=int, default=1, help="threads for NumPy's BLAS and PyTorch (default 1)"
    )
    parser.add_argument("--filter", default="", help="only the cases whose label has this text")
    parser.add_argument("--json", type=Path, help="write the table here (default: see above)")
    parser.add_argument(
        "--default-malloc",
        action="store_true",
        help="leave glibc's allocator settings as they are (default: keep freed memory)",
    )
    return parser.parse_args(argv)


def load_libraries(worker: TorchWorker) -> dict:
    """The libraries to compare, name -> module (None when not installed); torch is timed by
    `worker`, in its own process."""
    import numpy

    import tocha

    return {"tocha": tocha, "torch": worker if worker.__version__ else None, "numpy": numpy}


def warn_if_torch_loaded() -> None:
    """Warn when torch was imported in this process: its OpenMP then slows tocha-onednn's."""
    if "torch" in sys.modules:
        print(
            "warning: torch was imported in the parent process; tocha's figures are suspect",
            file=sys.stderr,
        )


def machine(libs: dict) -> dict:
    """The machine and the versions the figures were taken with."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(
                line.split(":", 1)[1].strip() for line in info if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    versions = {name: getattr(lib, "__version__", None) for name, lib in libs.items()}
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions,
    }


def format_time(seconds: float | None) -> str:
    """`seconds` in the unit that suits it: ns, us, ms or s ("n/a" for None)."""
    if seconds is None:
        return "n/a"
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        if seconds < 999.5 * scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


def row(result) -> dict:
    """One result as a row of the JSON table."""
    times = result.times
    judged = result.case.goal(result) if result.case.goal else None
    return {
        "case": result.case.name,
        "size": result.case.size,
        "tocha_s": times["tocha"],
        "torch_s": times["torch"],
        "numpy_s": times["numpy"],
        "tocha_over_torch": ratio(times["tocha"], times["torch"]),
        "tocha_over_numpy": ratio(times["tocha"], times["numpy"]),
        "goal": judged and judged[1],
        "met": judged and judged[0],
        "why_not": result.why_not,
    }


def print_header(width: int) -> None:
    print(
        f"{'case':<{width}}{'tocha':>10}{'torch':>10}{'numpy':>10}{'tocha/torch':>13}"
        f"{'tocha/numpy':>13}  goal"
    )


def print_row(label: str, width: int, entry: dict) -> None:
    def show(value):
        return "-" if value is None else f"{value:.2f}"

    verdict = (
        "" if entry["goal"] is None else f"{'ok  ' if entry['met'] else 'MISS'} {entry['goal']}"
    )
    print(
        f"{label:<{width}}{format_time(entry['tocha_s']):>10}{format_time(entry['torch_s']):>10}"
        f"{format_time(entry['numpy_s']):>10}{show(entry['tocha_over_torch']):>13}"
        f"{show(entry['tocha_over_numpy']):>13}  {verdict}",
        flush=True,
    )


def write_json(path: Path, about: dict, threads: int, run: dict) -> None:
    """Write `run` under its thread count, keeping other thread counts of the same machine."""
    runs = {}
    if path.exists():
        previous = json.loads(path.read_text())
        if previous.get("machine", {}).get("cpu") == about["cpu"]:
            runs = previous.get("runs", {})
    runs[str(threads)] = run
    path.write_text(json.dumps({"machine": about, "runs": runs}, indent=2) + "\n")


def write_chart(path: Path, rows: list[dict], threads: int) -> bool:
    """Draw the tocha/torch ratio of every case as a horizontal bar chart (a PNG beside the
    JSON); False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    shown = [r for r in rows if r["tocha_over_torch"] is not None]
    if not shown:
        return False
    fig, ax = plt.subplots(figsize=(13, 0.28 * len(shown) + 1.2))
    ratios = [r["tocha_over_torch"] for r in shown]
    ax.barh(
        [f"{r['case']} [{r['size']}]" for r in shown],
        ratios,
        color=["tab:green" if x <= 1 else "tab:orange" for x in ratios],
    )
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel(f"tocha time / torch time ({threads} thread(s); < 1: tocha faster)")
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# With several threads, a pause before each batch lets the other process's OpenMP threads
# stop spinning (they spin for milliseconds after their work, and the cores are few).
SETTLE = 0.005


def run_cases(args: argparse.Namespace, libs: dict) -> tuple[dict, tuple, list[dict]]:
    """Time and print the cases `args` selects on `libs`: the machine, the load average before
    the run and the table's rows."""
    cases = [case for case in harness.load_cases() if args.filter in case.label]
    about = machine(libs)
    print(
        f"{about['cpu']} ({about['cpus']} cpus), {args.threads} thread(s); "
        + ", ".join(f"{k} {v}" for k, v in about["versions"].items() if v)
    )
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} before the run")
    width = max([len(case.label) + 2 for case in cases] + [30])
    print_header(width)
    rows, notes = [], []
    settle = SETTLE if args.threads > 1 else 0
    for case in cases:
        entry = row(harness.time_side_by_side(case, libs, quick=args.quick, settle=settle))
        rows.append(entry)
        print_row(case.label, width, entry)
        notes += [f"  {case.label}, {lib}: {why}" for lib, why in entry["why_not"].items()]
    if notes:
        print("n/a:\n" + "\n".join(notes))
    return about, load, rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The thread counts are read once, when NumPy's BLAS and PyTorch load: set them first.
    harness.set_thread_variables(args.threads)
    tune_malloc = not args.default_malloc
    if tune_malloc:
        harness.keep_freed_memory()
    with TorchWorker(args.threads, tune_malloc) as worker:
        about, load, rows = run_cases(args, load_libraries(worker))
    warn_if_torch_loaded()
    path = args.json or (None if args.quick or args.filter else RESULTS)
    if path is not None:
        write_json(
            path, about, args.threads, {"quick": args.quick, "load_average": load, "rows": rows}
        )
        print(f"wrote {path}")
        chart = path.with_name(f"{path.stem}-{args.threads}-threads.png")
        if write_chart(chart, rows, args.threads):
            print(f"wrote {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
