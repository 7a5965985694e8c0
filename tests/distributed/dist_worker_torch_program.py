"""A PyTorch program, unchanged: run by test_dist_launch.py through
``python -m tocha.run -m torch.distributed.run --standalone --nproc_per_node 2``. Prints
``PASS``/``FAIL`` lines."""

import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(2) * (rank + 1)
dist.all_reduce(t)
elastic = {k: os.environ.get(k) for k in ("LOCAL_RANK", "GROUP_RANK", "TORCHELASTIC_RUN_ID")}
ok = (
    torch.__name__ == "torch"
    and t.tolist() == [3.0, 3.0]
    and dist.get_node_local_rank() == rank
    and elastic["GROUP_RANK"] == "0"
    and os.environ.get("TORCHELASTIC_ERROR_FILE", "").endswith(f"/{rank}/error.json")
    and None not in elastic.values()
)
line = f"{'PASS' if ok else 'FAIL'} torch program rank {rank}: {t.tolist()} {elastic}\n"
sys.stdout.write(line)  # one write: the ranks share the launcher's stdout
sys.stdout.flush()
dist.destroy_process_group()
