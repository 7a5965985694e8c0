"""``python -m tocha.run SCRIPT [ARGS]`` (or ``tocha-run``): run a program written for
PyTorch on tocha, unchanged.

Every ``import torch`` and ``from torch.X import Y`` in the program, and in the modules it
imports, resolves to tocha (`tocha.compat.alias_torch`). The script runs as ``__main__`` with
``sys.argv`` set to ``[SCRIPT, *ARGS]`` and its folder first on ``sys.path``, as
``python SCRIPT ARGS`` would run it; ``-m MODULE`` runs a module instead, as ``python -m``.
"""

from __future__ import annotations

import os
import runpy
import sys

from .compat import alias_torch

__all__ = ["main"]

_USAGE = "usage: python -m tocha.run [-m MODULE | SCRIPT] [ARGS...]"


def main(argv: list[str] | None = None) -> None:
    """Run the program `argv` names (default: this process's arguments) with torch aliased to
    tocha. Exits with status 2 and a usage line when no program is named."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(0 if argv else 2)
    alias_torch()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            raise SystemExit(2)
        sys.argv = argv[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
