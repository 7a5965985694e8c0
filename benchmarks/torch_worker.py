"""The child process that times PyTorch for run.py, and the parent's handle on it.

torch runs in a child process: its OpenMP and the GNU OpenMP of tocha-onednn contend when both
live in one process (a 2-thread GPT block was seen 8x slower). The parent never imports torch;
for each case it asks the worker to plan (prepare and calibrate, as `harness.plan` does), then
to time one batch at a time, between its own batches of tocha and NumPy.

The protocol is one JSON object per line. The worker, started as ``python torch_worker.py
THREADS TUNE_MALLOC``, first answers ``{"version": V}`` (null: torch is not installed, and it
exits). Then:

- ``{"plan": LABEL, "quick": Q}`` -> ``{"loops": L, "repeats": R}``, ``{"none": true}`` (no
  torch callable) or ``{"unavailable": WHY}``;
- ``{"time": L}`` -> ``{"seconds": S}``: L calls of the planned case, on the case's clock;
- an unexpected exception answers ``{"error": TRACEBACK}``; the end of its input ends it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import harness

EXIT_GRACE = 10  # seconds


class TorchWorker:
    """The parent's handle on a worker timing PyTorch: it stands in for the torch module in
    `harness.time_side_by_side`. Started once per run; `close` (or ``with``) ends it."""

    def __init__(self, threads: int, tune_malloc: bool) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(threads), str(int(tune_malloc))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: `close` can end its children too
        )
        self.__version__ = self._receive()["version"]

    def __enter__(self) -> TorchWorker:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        """End the worker: close its input and wait for it; one still running after
        `EXIT_GRACE` seconds (a case's DataLoader workers can hold up torch's shutdown) is
        killed with its children."""
        self.process.stdin.close()
        try:
            self.process.wait(EXIT_GRACE)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def _receive(self) -> dict:
        """The worker's next answer; raises RuntimeError when it failed or died."""
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the torch worker died (its error is above)")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the torch worker failed:\n{answer['error']}")
        return answer

    def _ask(self, request: dict) -> dict:
        """Send `request` and return the worker's answer."""
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._receive()

    def plan(
        self, case: harness.Case, quick: bool
    ) -> tuple[Callable[[int], float], int, int] | None:
        """`harness.plan` for `case` on torch, run in the worker; the batch it returns asks the
        worker to time `loops` calls."""
        answer = self._ask({"plan": case.label, "quick": quick})
        if "unavailable" in answer:
            raise harness.Unavailable(answer["unavailable"])
        if answer.get("none"):
            return None
        return self._batch, answer["loops"], answer["repeats"]

    def _batch(self, loops: int) -> float:
        """The seconds `loops` calls of the planned case take in the worker."""
        return self._ask({"time": loops})["seconds"]


class _Server:
    """The worker's side: the cases by label, and the batch of the case planned last."""

    def __init__(self, torch) -> None:
        self.torch = torch
        self.cases = {case.label: case for case in harness.load_cases()}
        self.batch = None

    def answer(self, request: dict) -> dict:
        """The answer to one request."""
        if "time" in request:
            return {"seconds": self.batch(request["time"])}
        try:
            plan = harness.plan(self.cases[request["plan"]], self.torch, request["quick"])
        except harness.Unavailable as exc:
            return {"unavailable": str(exc)}
        if plan is None:
            return {"none": True}
        self.batch, loops, repeats = plan
        return {"loops": loops, "repeats": repeats}


def serve(threads: int, tune_malloc: bool) -> None:
    """Answer the parent's requests on stdin until it closes it. The answers go to the
    original stdout; anything the cases print goes to stderr, out of the protocol's way.
    `tune_malloc`: have glibc keep freed memory, as the parent does."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    harness.set_thread_variables(threads)  # before torch loads its OpenMP
    if tune_malloc:
        harness.keep_freed_memory()
    try:
        import torch
    except ImportError:
        print(json.dumps({"version": None}), file=answers)
        return
    torch.set_num_threads(threads)
    print(json.dumps({"version": torch.__version__}), file=answers)
    server = _Server(torch)
    for line in sys.stdin:
        try:
            answer = server.answer(json.loads(line))
        except Exception:
            answer = {"error": traceback.format_exc()}
        print(json.dumps(answer), file=answers)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2] == "1")
