"""``python -m tocha.distributed.launch``, as the deprecated ``torch.distributed.launch``:
torchrun's launcher (`run`), which also passes each worker ``--local-rank=N`` unless
``--use-env`` (``--use_env``) is given, and warns that the module is deprecated."""

from __future__ import annotations

import sys
import warnings

from . import run

__all__ = ["main"]

DEPRECATED = """The module torch.distributed.launch is deprecated
and will be removed in future. Use torchrun.
Note that --use-env is set by default in torchrun.
If your script expects `--local-rank` argument to be set, please
change it to read from `os.environ['LOCAL_RANK']` instead. See
https://pytorch.org/docs/stable/distributed.html#launch-utility for
further instructions
"""


def main(argv: list[str] | None = None) -> int:
    """Launch as torchrun does, adding ``--local-rank=N`` to each worker's arguments
    unless ``--use-env`` is among `argv`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    warnings.warn(DEPRECATED, FutureWarning, stacklevel=2)
    use_env = run.parse_args(argv).use_env
    return run.main(argv, rank_args=None if use_env else lambda rank: [f"--local-rank={rank}"])


if __name__ == "__main__":
    sys.exit(main())
