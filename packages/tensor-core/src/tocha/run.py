"""``python -m tocha.run SCRIPT [ARGS]`` (or ``tocha-run``): run a program written for
PyTorch on tocha, unchanged.

Every ``import torch`` and ``from torch.X import Y`` in the program, and in the modules it
imports, resolves to tocha (`tocha.compat.alias_torch`), also in the processes it starts by
"spawn" or "forkserver" (multiprocessing, DataLoader workers). The script runs as ``__main__`` with
``sys.argv`` set to ``[SCRIPT, *ARGS]`` and its folder first on ``sys.path``, as
``python SCRIPT ARGS`` would run it; ``-m MODULE`` runs a module instead, as ``python -m``.

Libraries see an installed PyTorch: ``importlib.metadata.version("torch")`` and
``torch.__version__`` are the PyTorch version whose API tocha follows
(`tocha.torch_version.__version__`, a version string that compares as a version), so that
checks such as transformers' "requires PyTorch >= 2.6" pass; ``tocha.__version__`` stays
tocha's own. Without tocha-distributed, ``torch.distributed.is_available()`` is False.

The CPU's random generators draw PyTorch's values for the same seed
(`tocha.compat.use_pytorch_random`; ``TOCHA_PYTORCH_RANDOM=0`` keeps tocha's faster PCG64).

The runner owns the process, so it also asks glibc to keep freed memory for reuse (what
``TOCHA_MALLOC_TUNING=1`` does for a plain ``import tocha``): without it, a loop whose ops
make and free arrays of a few MB page-faults on every fresh array (a 1M-element graph's
forward and backward: 6.6 ms against 0.9 ms). ``TOCHA_MALLOC_TUNING=0`` leaves glibc as it is.
"""

from __future__ import annotations

import os
import runpy
import sys

from ._cpu import keep_freed_memory
from .compat import alias_torch

__all__ = ["main"]

_USAGE = "usage: python -m tocha.run [-m MODULE | SCRIPT] [ARGS...]"
_HELP = """{usage}

Run a program written for PyTorch on tocha, unchanged: every `import torch` (and torch.X)
in it and in the libraries it imports gives tocha.

Libraries see PyTorch {version} installed (the version of the PyTorch API tocha follows):
importlib.metadata answers for the `torch` distribution with that version, and
torch.__version__ is it (a string that compares as a version); tocha.__version__ stays
tocha's own ({tocha}).

After torch.manual_seed, the CPU's random draws (rand, randn, randint, randperm, dropout,
multinomial, the nn.init functions...) are PyTorch's values; TOCHA_PYTORCH_RANDOM=0 keeps
tocha's own, faster stream.

glibc keeps freed memory for reuse, so that fresh arrays of a few MB do not page-fault;
TOCHA_MALLOC_TUNING=0 leaves the allocator as it is.

  SCRIPT [ARGS...]     run SCRIPT as __main__ with sys.argv = [SCRIPT, *ARGS]
  -m MODULE [ARGS...]  run MODULE as __main__, as python -m
  -h, --help           show this help
"""


def main(argv: list[str] | None = None) -> None:
    """Run the program `argv` names (default: this process's arguments) with torch aliased to
    tocha. Exits with status 2 and a usage line when no program is named."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        print(_USAGE, file=sys.stderr)
        raise SystemExit(2)
    if argv[0] in ("-h", "--help"):
        import tocha
        from tocha.torch_version import __version__

        print(_HELP.format(usage=_USAGE, version=__version__, tocha=tocha.__version__))
        raise SystemExit(0)
    if os.environ.get("TOCHA_MALLOC_TUNING") != "0":
        keep_freed_memory()
    alias_torch()
    # spawned processes get this sys.path: their first `import torch` aliases it too
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_spawn_alias"))
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            raise SystemExit(2)
        sys.argv = argv[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = os.path.abspath(argv[0])  # as ``python prog.py`` names it in tracebacks, warnings
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
