"""A torchrun script whose main is decorated with ``@record``; rank 1 raises (or, given
``exit``, calls ``sys.exit(4)`` while rank 0 waits in a collective). Run by
test_dist_launch.py through the launcher, which must report rank 1's error and stop."""

import sys

import tocha
import tocha.distributed as dist
from tocha.distributed.elastic.multiprocessing.errors import record


@record
def main() -> None:
    dist.init_process_group("gloo")
    if dist.get_rank() == 1:
        if sys.argv[1:] == ["exit"]:
            sys.exit(4)
        raise ValueError("rank 1 fails on purpose")
    if sys.argv[1:] == ["exit"]:
        dist.all_reduce(tocha.ones(1))  # waits for rank 1 (the timeout is 30 minutes)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
