"""A torchrun script whose main is decorated with ``@record``; rank 1 raises. Run by
test_dist_launch.py through the launcher, which must report rank 1's error."""

import tocha.distributed as dist
from tocha.distributed.elastic.multiprocessing.errors import record


@record
def main() -> None:
    dist.init_process_group("gloo")
    if dist.get_rank() == 1:
        raise ValueError("rank 1 fails on purpose")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
