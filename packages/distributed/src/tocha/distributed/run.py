"""The launcher: ``python -m tocha.distributed.run --nproc_per_node N train.py [args...]``.

It takes torchrun's arguments and, like torchrun on one machine, starts N processes of
``train.py`` with the environment torchrun gives them (``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``GROUP_WORLD_SIZE``, ``ROLE_RANK``,
``ROLE_NAME``, ``ROLE_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``, ``TORCHELASTIC_RUN_ID``,
``TORCHELASTIC_RESTART_COUNT``, ``TORCHELASTIC_MAX_RESTARTS``, ``TORCHELASTIC_ERROR_FILE``...),
then returns the first
failing exit code. It starts them through MPICH's ``mpiexec`` (Hydra) in its multiple-program
form, one program block per rank with that rank's variables::

    mpiexec -n 1 -env RANK 0 -env LOCAL_RANK 0 python train.py : -n 1 -env RANK 1 ...

so that the processes form one MPI world, which `init_process_group` joins (``gloo``,
``mpi`` or ``nccl``, with ``env://`` by default); mpiexec also stops every rank when one is
killed. ``mpiexec`` is looked for beside the Python interpreter (where the ``mpich`` wheel
puts it), then on ``PATH``, unless ``--mpiexec`` names it.

Run under ``python -m tocha.run -m tocha.distributed.run ...``, it starts the workers under
``tocha.run`` too, so that a PyTorch program's ``import torch`` gives tocha.

One machine only: ``--nnodes`` must be 1 (or ``1:1``) and ``--node_rank`` 0. ``--standalone``
picks a free port on localhost; ``--rdzv_endpoint host:port`` gives the master's address.
The elastic options (``--max_restarts``, ``--monitor_interval``, ``--rdzv_conf``, the
logging options...) are accepted; workers are never restarted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

__all__ = ["find_mpiexec", "launch_command", "main", "worker_env"]


def find_mpiexec() -> str | None:
    """The path of ``mpiexec``: beside the interpreter, else on ``PATH``; None if absent."""
    return shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _flag(parser: argparse.ArgumentParser, name: str, **kw) -> None:
    """An option spelled as torchrun spells it, with dashes or underscores."""
    spellings = {f"--{name}", f"--{name.replace('_', '-')}"}
    parser.add_argument(*sorted(spellings), dest=name, **kw)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tocha.distributed.run", description=__doc__.splitlines()[0]
    )
    _flag(parser, "nnodes", default="1", help="only 1 (or 1:1): one machine")
    _flag(parser, "nproc_per_node", default="1", help="an int, or auto/cpu (the CPU count)")
    _flag(parser, "node_rank", type=int, default=0, help="only 0: one machine")
    _flag(parser, "master_addr", default="127.0.0.1")
    _flag(parser, "master_port", type=int, default=29500)
    parser.add_argument("--standalone", action="store_true", help="on localhost, a free port")
    _flag(parser, "rdzv_backend", default="static")
    _flag(parser, "rdzv_endpoint", default="", help="host[:port] of the master")
    _flag(parser, "rdzv_id", default=None, help="the run id (TORCHELASTIC_RUN_ID)")
    _flag(parser, "run_id", default=None, help=argparse.SUPPRESS)
    _flag(parser, "rdzv_conf", default="", help="accepted")
    _flag(parser, "max_restarts", type=int, default=0, help="accepted; nothing is restarted")
    _flag(parser, "monitor_interval", type=float, default=0.1, help="accepted")
    _flag(parser, "start_method", default="spawn", choices=["spawn", "fork", "forkserver"])
    parser.add_argument("--role", default="default")
    _flag(parser, "log_dir", default=None, help="accepted")
    parser.add_argument("-r", "--redirects", default="0", help="accepted")
    parser.add_argument("-t", "--tee", default="0", help="accepted")
    _flag(parser, "local_ranks_filter", default="", help="accepted")
    _flag(parser, "local_addr", default=None, help="accepted")
    parser.add_argument("-m", "--module", action="store_true", help="run a module, as python -m")
    _flag(parser, "no_python", action="store_true")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to use")
    _flag(parser, "use_env", action="store_true", help=argparse.SUPPRESS)  # launch's
    parser.add_argument("training_script")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.nnodes not in ("1", "1:1") or args.node_rank != 0:
        parser.error(
            "tocha.distributed.run starts processes on one machine only: --nnodes 1 --node_rank 0"
        )
    if args.nproc_per_node in ("auto", "cpu"):
        args.nproc_per_node = os.cpu_count() or 1
    elif args.nproc_per_node.isdigit():
        args.nproc_per_node = int(args.nproc_per_node)
    else:
        parser.error(f"--nproc_per_node: an integer, auto or cpu, not {args.nproc_per_node!r}")
    if args.nproc_per_node < 1:
        parser.error("--nproc_per_node must be at least 1")
    if args.standalone:
        args.master_addr, args.master_port = "localhost", _free_port("127.0.0.1")
    elif args.rdzv_endpoint:
        host, _, port = args.rdzv_endpoint.partition(":")
        args.master_addr = host or args.master_addr
        args.master_port = int(port) if port else args.master_port
    return args


def worker_env(args: argparse.Namespace) -> dict[str, str]:
    """The variables every worker shares, as torchrun sets them (the rank's own are added
    per program block)."""
    n = str(args.nproc_per_node)
    env = {
        "WORLD_SIZE": n,
        "LOCAL_WORLD_SIZE": n,
        "ROLE_WORLD_SIZE": n,
        "GROUP_RANK": "0",
        "GROUP_WORLD_SIZE": "1",
        "ROLE_NAME": args.role,
        "MASTER_ADDR": args.master_addr,
        "MASTER_PORT": str(args.master_port),
        "TORCHELASTIC_RUN_ID": args.rdzv_id or args.run_id or uuid.uuid4().hex,
        "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": str(args.max_restarts),
        "TORCHELASTIC_USE_AGENT_STORE": "False",
        "PYTHON_EXEC": sys.executable,
    }
    env.setdefault("TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGTERM,SIGINT,SIGHUP,SIGQUIT")
    env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"  # torchrun's default, so the workers do not oversubscribe
    return env


def _python() -> list[str]:
    """How a worker's Python starts: under ``tocha.run`` too when the launcher runs there
    (``python -m tocha.run -m torch.distributed.run train.py``), so that the workers'
    ``import torch`` gives tocha as the launcher's does."""
    from tocha.compat import is_aliased

    return [sys.executable, "-u", *(["-m", "tocha.run"] if is_aliased() else [])]


def launch_command(
    args: argparse.Namespace, mpiexec: str, error_dir: str | None = None, rank_args=None
) -> list[str]:
    """The mpiexec command line that starts the ranks of `args`; with `error_dir`, each
    rank's ``TORCHELASTIC_ERROR_FILE`` lies in its own folder there, as torchrun's;
    `rank_args(rank)` gives arguments of a rank's own, after the script's."""
    program = [] if args.no_python else [*_python(), *(["-m"] if args.module else [])]
    program += [args.training_script, *args.training_script_args]
    command = [mpiexec]
    for rank in range(args.nproc_per_node):
        if rank:
            command.append(":")
        command += ["-n", "1"]
        for name in ("RANK", "LOCAL_RANK", "ROLE_RANK"):
            command += ["-env", name, str(rank)]
        if error_dir is not None:
            command += ["-env", "TORCHELASTIC_ERROR_FILE", f"{error_dir}/{rank}/error.json"]
        command += program
        if rank_args is not None:
            command += rank_args(rank)
    return command


def main(argv: list[str] | None = None, rank_args=None) -> int:
    """Launch the workers `argv` describes; `rank_args(rank)` adds arguments of a rank's
    own (``torch.distributed.launch``'s ``--local-rank``). Returns the exit code."""
    args = parse_args(argv)
    mpiexec = args.mpiexec or find_mpiexec()
    if mpiexec is None:
        sys.exit(
            "tocha.distributed.run: mpiexec not found; install MPICH (pip install mpich) or "
            "put an MPI's mpiexec on PATH"
        )
    env = {**os.environ, **worker_env(args)}
    with tempfile.TemporaryDirectory(prefix="torchelastic_") as error_dir:
        try:
            command = launch_command(args, mpiexec, error_dir, rank_args)
            code = subprocess.call(command, env=env)
        except KeyboardInterrupt:  # mpiexec got the signal too and stops the ranks
            return 130
        if code:
            _report(args, error_dir, code)
        return code


def _report(args: argparse.Namespace, error_dir: str, code: int) -> None:
    """Print torchrun's report of the workers that recorded their error (``@record``)."""
    from .elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

    failures = {}
    for rank in range(args.nproc_per_node):
        path = f"{error_dir}/{rank}/error.json"
        if os.path.isfile(path):
            failures[rank] = ProcessFailure(rank, 0, code, path)
    if failures:
        print(f"{ChildFailedError.__module__}.ChildFailedError: ", file=sys.stderr)
        print(ChildFailedError(args.training_script, failures).format_msg(), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
