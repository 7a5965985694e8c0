"""The launcher: ``python -m tocha.distributed.run --nproc-per-node N train.py [args...]``.

Like torchrun on one machine: it starts N processes of ``train.py`` with the environment
torchrun gives them (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``,
``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``, ``TORCHELASTIC_RUN_ID``), and returns the
first failing exit code. It starts them through MPICH's ``mpiexec`` (Hydra) in its
multiple-program form, one program block per rank with that rank's variables::

    mpiexec -n 1 -env RANK 0 -env LOCAL_RANK 0 python train.py : -n 1 -env RANK 1 ...

so that the processes form one MPI world, which `init_process_group` joins; mpiexec also
stops every rank when one is killed. ``mpiexec`` is looked for beside the Python interpreter
(where the ``mpich`` wheel puts it), then on ``PATH``, unless ``--mpiexec`` names it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

__all__ = ["find_mpiexec", "launch_command", "main"]


def find_mpiexec() -> str | None:
    """The path of ``mpiexec``: beside the interpreter, else on ``PATH``; None if absent."""
    return shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tocha.distributed.run", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    parser.add_argument("--nnodes", default="1", help="only 1: one machine")
    parser.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    parser.add_argument("--master-port", "--master_port", type=int, default=29500)
    parser.add_argument("--standalone", action="store_true", help="accepted (always one node)")
    parser.add_argument("--run-id", "--run_id", default=None)
    parser.add_argument("-m", "--module", action="store_true", help="run a module, as python -m")
    parser.add_argument("--no-python", "--no_python", action="store_true")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to use")
    parser.add_argument("training_script")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.nnodes not in ("1", "1:1"):
        parser.error("tocha.distributed.run starts processes on one machine only: --nnodes 1")
    if args.nproc_per_node < 1:
        parser.error("--nproc-per-node must be at least 1")
    return args


def launch_command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    """The mpiexec command line that starts the ranks of `args`."""
    program = [] if args.no_python else [sys.executable, "-u"] + (["-m"] if args.module else [])
    program += [args.training_script, *args.training_script_args]
    command = [mpiexec]
    for rank in range(args.nproc_per_node):
        if rank:
            command.append(":")
        command += ["-n", "1", "-env", "RANK", str(rank), "-env", "LOCAL_RANK", str(rank)]
        command += program
    return command


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    mpiexec = args.mpiexec or find_mpiexec()
    if mpiexec is None:
        sys.exit(
            "tocha.distributed.run: mpiexec not found; install MPICH (pip install mpich) or "
            "put an MPI's mpiexec on PATH"
        )
    env = dict(os.environ)
    env.update(
        WORLD_SIZE=str(args.nproc_per_node),
        LOCAL_WORLD_SIZE=str(args.nproc_per_node),
        GROUP_RANK="0",
        ROLE_RANK="0",
        MASTER_ADDR=args.master_addr,
        MASTER_PORT=str(args.master_port),
        TORCHELASTIC_RUN_ID=args.run_id or uuid.uuid4().hex,
    )
    try:
        return subprocess.call(launch_command(args, mpiexec), env=env)
    except KeyboardInterrupt:  # mpiexec got the signal too and stops the ranks
        return 130


if __name__ == "__main__":
    sys.exit(main())
