"""Distributed start as PyTorch programs write it: a world of one with ``tcp://`` in this very
process (no launcher), the init methods' errors, and a torchrun-style launch of two ranks
(``python -m tocha.distributed.run --standalone --nproc_per_node 2``) through ``gloo``."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="tocha.distributed runs on MPI: pip install mpi4py mpich")

import tocha as torch  # noqa: E402
import tocha.distributed as dist  # noqa: E402
from tocha.distributed import run  # noqa: E402

WORKER_CHECKS = ["environment", "all_reduce", "broadcast", "ddp_step"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def no_group():
    """No default group before or after the test, whatever it did."""
    assert not dist.is_initialized()
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_world_of_one_over_tcp_without_a_launcher(no_group, clean_env):
    port = free_port()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    assert dist.is_initialized() and dist.get_backend() == "gloo"
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    t = torch.arange(3.0)
    dist.all_reduce(t)
    dist.broadcast(t, src=0)
    assert t.tolist() == [0.0, 1.0, 2.0]
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()


@pytest.mark.parametrize("backend", [None, "gloo", "mpi"], ids=["none", "gloo", "mpi"])
def test_world_of_one_from_the_environment(no_group, clean_env, backend):
    clean_env.setenv("MASTER_ADDR", "127.0.0.1")
    clean_env.setenv("MASTER_PORT", str(free_port()))
    clean_env.setenv("RANK", "0")
    clean_env.setenv("WORLD_SIZE", "1")
    clean_env.setenv("LOCAL_RANK", "0")
    dist.init_process_group(backend, init_method="env://")
    assert dist.get_backend() == (backend or "gloo")
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    dist.destroy_process_group()


ERRORS = [
    ("env_rank", {"init_method": "env://"}, ValueError, "environment variable RANK expected"),
    (
        "env_world",
        {"init_method": "env://", "rank": 0},
        ValueError,
        "environment variable WORLD_SIZE expected",
    ),
    (
        "env_addr",
        {"init_method": "env://", "rank": 0, "world_size": 1},
        ValueError,
        "environment variable MASTER_ADDR expected",
    ),
    ("tcp_rank", {"init_method": "tcp://127.0.0.1:29500"}, ValueError, "rank parameter missing"),
    (
        "tcp_world",
        {"init_method": "tcp://127.0.0.1:29500", "rank": 0},
        ValueError,
        "world size parameter missing",
    ),
    (
        "tcp_port",
        {"init_method": "tcp://127.0.0.1", "rank": 0, "world_size": 1},
        ValueError,
        "port number missing",
    ),
    (
        "scheme",
        {"init_method": "foo://x", "rank": 0, "world_size": 1},
        RuntimeError,
        "No rendezvous handler for foo://",
    ),
    (
        "store_and_method",
        {"init_method": "tcp://127.0.0.1:1", "store": object(), "rank": 0, "world_size": 1},
        AssertionError,
        "Cannot specify both init_method and store",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_rendezvous_errors_are_pytorchs(no_group, clean_env, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        dist.init_process_group("gloo", **kwargs)
    assert not dist.is_initialized()


def test_backend_names():
    assert dist.is_gloo_available()
    assert dist.Backend("GLOO") == "gloo"
    assert dist.Backend("cpu:gloo,cuda:nccl").uses_nccl()
    assert not dist.Backend("gloo").uses_nccl()
    assert dist.Backend("foo") == "foo"  # any name, as PyTorch's; refused when used
    with pytest.raises(ValueError, match="must be string-ish"):
        dist.Backend(3)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"backend": "nonsense"}, AssertionError, "Unknown backend type nonsense"),
        ({"backend": "ucc"}, AssertionError, "Unknown c10d backend type UCC"),
        ({"timeout": 5}, TypeError, "to be of type datetime.timedelta, got 5"),
        ({"world_size": 0}, ValueError, "TCPStore world size cannot be 0"),
        ({"rank": 5, "world_size": 2}, ValueError, "Invalid rank 5"),
    ],
    ids=["unknown", "ucc", "timeout", "world0", "rank"],
)
def test_init_errors_as_pytorchs(no_group, clean_env, kwargs, error, message):
    arguments = {"backend": "gloo", "rank": 0, "world_size": 1, **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        dist.init_process_group(init_method=f"tcp://127.0.0.1:{free_port()}", **arguments)
    assert not dist.is_initialized()


def test_launcher_takes_torchruns_arguments():
    args = run.parse_args(
        "--nnodes 1 --node_rank 0 --nproc_per_node 3 --master_addr 10.0.0.1 "
        "--master_port 1234 --rdzv_id job --max_restarts 0 --role trainer train.py --lr 1".split()
    )
    assert (args.nproc_per_node, args.master_addr, args.master_port) == (3, "10.0.0.1", 1234)
    assert args.training_script_args == ["--lr", "1"]
    env = run.worker_env(args)
    assert env["WORLD_SIZE"] == env["LOCAL_WORLD_SIZE"] == "3"
    assert (env["TORCHELASTIC_RUN_ID"], env["ROLE_NAME"], env["GROUP_RANK"]) == (
        "job",
        "trainer",
        "0",
    )
    command = run.launch_command(args, "mpiexec")
    last = command[len(command) - command[::-1].index(":") :]
    assert command.count(":") == 2 and last[:5] == ["-n", "1", "-env", "RANK", "2"]
    assert last[-3:] == ["train.py", "--lr", "1"]
    standalone = run.parse_args(["--standalone", "--nproc-per-node", "2", "x.py"])
    assert standalone.master_addr == "localhost" and standalone.master_port > 0
    endpoint = run.parse_args(["--rdzv_endpoint", "host:4321", "--rdzv_backend", "c10d", "x.py"])
    assert (endpoint.master_addr, endpoint.master_port) == ("host", 4321)
    for bad in (
        ["--nnodes", "2", "x.py"],
        ["--node_rank", "1", "x.py"],
        ["--nproc_per_node", "gpu", "x.py"],
    ):
        with pytest.raises(SystemExit):
            run.parse_args(bad)


@pytest.fixture(scope="module", params=["env", "tcp"])
def torchrun_output(mpirun, request):
    """What the two ranks printed, initialized by ``env://`` or by ``tcp://`` with ranks."""
    proc = mpirun("dist_worker_torchrun.py", n=2, launcher=True, timeout=120, args=[request.param])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", WORKER_CHECKS)
def test_torchrun_style_launch_of_two_ranks(torchrun_output, name):
    failures = re.findall(rf"^FAIL {name} .*?(?=^PASS|^FAIL|\Z)", torchrun_output, re.M | re.S)
    assert not failures, "".join(failures)
    assert sorted(re.findall(rf"^PASS {name} rank (\d)$", torchrun_output, re.M)) == ["0", "1"]


def test_torchrun_of_a_pytorch_program_under_tocha_run(mpirun):
    """``python -m tocha.run -m torch.distributed.run``: torchrun's module, aliased; the
    workers it starts run under tocha.run too, so their ``import torch`` is tocha."""
    worker = str(Path(__file__).resolve().parent / "dist_worker_torch_program.py")
    command = [sys.executable, "-m", "tocha.run", "-m", "torch.distributed.run", "--standalone"]
    proc = subprocess.run(
        [*command, "--nproc_per_node", "2", worker],
        capture_output=True,
        text=True,
        timeout=90,
    )
    found = sorted(line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL")))
    assert proc.returncode == 0 and len(found) == 2, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout


def test_a_failing_rank_stops_the_launch_and_its_recorded_error_is_reported(mpirun):
    """A rank that raised exits at once (it does not wait in MPI_Finalize for the others),
    so the launch ends; its ``@record``-ed error is the reported root cause."""
    proc = mpirun("dist_worker_record.py", n=2, launcher=True, timeout=60)
    assert proc.returncode != 0
    assert "Root Cause (first observed failure):" in proc.stderr, proc.stderr
    assert "rank      : 1 (local_rank: 1)" in proc.stderr
    assert "ValueError: rank 1 fails on purpose" in proc.stderr


def test_a_rank_that_exits_with_a_failing_status_stops_the_launch(mpirun):
    start = time.monotonic()
    proc = mpirun("dist_worker_record.py", n=2, launcher=True, timeout=60, args=["exit"])
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert time.monotonic() - start < 30


def test_record_writes_the_error_file(tmp_path, monkeypatch):
    from tocha.distributed.elastic.multiprocessing.errors import ProcessFailure, record

    path = tmp_path / "0" / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))

    @record
    def main():
        raise KeyError("missing")

    with pytest.raises(KeyError):
        main()
    failure = ProcessFailure(0, 1, 1, str(path))
    assert failure.error_file_data["message"]["message"] == "KeyError: 'missing'"
    assert "raise KeyError" in failure.message
    assert record(lambda: (_ for _ in ()).throw(SystemExit(0)))() is None


def test_legacy_launch_passes_local_rank_unless_use_env():
    """``python -m torch.distributed.launch``: deprecated, it gives each worker
    ``--local-rank=N`` (``--use-env``: only LOCAL_RANK in the environment)."""
    worker = (  # one write a line: the two ranks share the launcher's stdout
        "import sys, os; "
        "sys.stdout.write(f\"ARGS {os.environ['LOCAL_RANK']} {sys.argv[1:]}\\n\"); "
        "sys.stdout.flush()"
    )
    for extra, expected in (([], "['--local-rank={}']"), (["--use-env"], "[]")):
        command = [sys.executable, "-m", "tocha.distributed.launch", "--nproc_per_node", "2"]
        proc = subprocess.run(
            [*command, *extra, "--no-python", sys.executable, "-c", worker],
            capture_output=True,
            text=True,
            timeout=60,
        )
        found = sorted(line for line in proc.stdout.splitlines() if line.startswith("ARGS"))
        assert found == [f"ARGS {r} {expected.format(r)}" for r in (0, 1)], proc.stdout
        assert "torch.distributed.launch is deprecated" in proc.stderr
