"""Under ``tocha.run``, processes started by "spawn" (multiprocessing, DataLoader workers) import
the program afresh: their ``import torch`` gives tocha too, as the parent's does."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import torch
    import torch.multiprocessing as mp
    from torch.utils.data import DataLoader, TensorDataset

    def work(queue):
        import torch
        queue.put(type(torch.ones(1)).__module__.split(".")[0])

    if __name__ == "__main__":
        loader = DataLoader(
            TensorDataset(torch.arange(4.0)), batch_size=2, num_workers=1,
            multiprocessing_context="spawn",
        )
        print([batch[0].tolist() for batch in loader])
        context = mp.get_context("spawn")
        queue = context.Queue()
        process = context.Process(target=work, args=(queue,))
        process.start()
        print(queue.get(timeout=120))
        process.join()
    """
)


def test_spawned_processes_import_tocha_as_torch(tmp_path):
    script = tmp_path / "spawning.py"
    script.write_text(PROGRAM)
    result = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[[0.0, 1.0], [2.0, 3.0]]", "tocha"]
