"""Process groups: `init_process_group`, `new_group`, `destroy_process_group` and the
questions about ranks (`get_rank`, `get_world_size`...).

The processes are MPI's: started by ``mpirun -n N python train.py`` or by the launcher
``python -m tocha.distributed.run`` (which calls ``mpiexec``), they learn their rank and the
world size from MPI; a process started alone is a world of one. The ``gloo`` backend and the
``env://``/``tcp://`` init methods are checked against that world (`_rendezvous`).

A group is a duplicate of MPI's communicator (``MPI_Comm_dup``, or
``MPI_Comm_split`` for `new_group`), so that tocha's messages never match the user's own.
"""

from __future__ import annotations

import os
import sys
import warnings
from datetime import timedelta
from importlib.util import find_spec

from ._types import Backend, default_pg_timeout

__all__ = [
    "GroupMember",
    "ProcessGroup",
    "destroy_process_group",
    "get_default_backend_for_device",
    "get_node_local_rank",
    "get_pg_count",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "is_available",
    "is_backend_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_ucc_available",
    "is_xccl_available",
    "new_group",
    "new_subgroups",
    "new_subgroups_by_enumeration",
]

NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class ProcessGroup:
    """A set of ranks that run collectives together.

    Its MPI communicator serves CPU tensors, the collective check and objects; a group of the
    ``nccl`` backend also has an NCCL communicator for CUDA tensors.
    """

    def __init__(self, backend: str, mpi, ranks: list[int], nccl=None) -> None:
        self._backend = backend
        self._mpi = mpi
        self._nccl = nccl
        self._ranks = ranks
        self._seq = 0
        self._monitor = None

    def monitor(self):
        """The backend that `monitored_barrier` talks through, apart from the collectives'
        (made on first use, by every rank together)."""
        if self._monitor is None:
            from ._mpi import ProcessGroupMPI

            self._monitor = ProcessGroupMPI(self._mpi.comm.Dup(), self._mpi.timeout)
        return self._monitor

    def rank(self) -> int:
        """This process's rank in the group."""
        return self._mpi.rank

    def size(self) -> int:
        """The number of ranks in the group."""
        return self._mpi.size

    def name(self) -> str:
        """The backend's name."""
        return self._backend

    def backend_for(self, device_type: str):
        """The backend that runs collectives on tensors of `device_type`."""
        if device_type == "cpu":
            return self._mpi
        if device_type == "cuda" and self._nccl is not None:
            return self._nccl
        raise RuntimeError(f"No backend type associated with device type {device_type}")

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend!r}, ranks={self._ranks})"


class GroupMember:
    """``GroupMember.WORLD`` is the default group (None before `init_process_group`);
    `new_group` returns ``GroupMember.NON_GROUP_MEMBER`` to the ranks outside the group."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


group = GroupMember
_GROUPS: list[ProcessGroup] = []
# Groups made by new_group that this rank is outside of: they count in get_pg_count.
_OUTSIDE = [0]


def is_available() -> bool:
    """Whether the distributed package can run: mpi4py is installed."""
    return is_mpi_available()


def is_mpi_available() -> bool:
    """Whether the MPI backend is available (mpi4py is installed)."""
    return find_spec("mpi4py") is not None


def is_nccl_available() -> bool:
    """Whether the NCCL backend is available (CuPy with its NCCL bindings is installed)."""
    if find_spec("cupy") is None:
        return False
    try:
        from cupy.cuda import nccl
    except ImportError:
        return False
    return nccl.available if hasattr(nccl, "available") else True


def is_gloo_available() -> bool:
    """Whether the ``gloo`` backend is available: tocha carries it on MPI (mpi4py)."""
    return is_mpi_available()


def is_ucc_available() -> bool:
    """Whether the UCC backend is available: tocha has none."""
    return False


def is_xccl_available() -> bool:
    """Whether the XCCL backend (Intel GPUs) is available: tocha has none."""
    return False


def is_backend_available(backend: str) -> bool:
    """Whether the backend named `backend` (any case) can run here."""
    available = {"gloo": is_gloo_available, "mpi": is_mpi_available, "nccl": is_nccl_available}
    check = available.get(str(backend).lower())
    return check is not None and check()


def get_default_backend_for_device(device) -> str:
    """The backend PyTorch picks for `device` (a name or `torch.device`): ``gloo`` for CPU,
    ``nccl`` for CUDA."""
    kind = device if isinstance(device, str) else device.type
    backends = {"cpu": "gloo", "cuda": "nccl"}
    kind = kind.split(":", 1)[0]
    if kind not in backends:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return backends[kind]


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its machine: ``LOCAL_RANK`` (set by the launcher, as torchrun
    sets it), else `fallback_rank`."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device "
        "context and want the code to run locally instead."
    )


def get_pg_count() -> int:
    """The number of process groups alive, the default one included (and those this rank
    is outside of)."""
    return len(_GROUPS) + _OUTSIDE[0]


def is_torchelastic_launched() -> bool:
    """Whether this process was started by a torchrun-style launcher (``tocha.distributed.run``
    sets ``TORCHELASTIC_RUN_ID``, as torchrun does)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether the default process group has been initialized."""
    return GroupMember.WORLD is not None


def _world() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(NOT_INITIALIZED)
    return GroupMember.WORLD


def resolve(group: ProcessGroup | None) -> ProcessGroup | None:
    """The group a collective runs on: `group`, or the default one; None for a rank outside
    `group`."""
    world = _world()
    if group is None:
        return world
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    return group


def member(group: ProcessGroup | None, collective: str) -> ProcessGroup | None:
    """`resolve`, warning as PyTorch does when this rank is outside `group` (the collective
    then does nothing here)."""
    g = resolve(group)
    if g is None:
        warnings.warn(
            f"Running {collective} on global rank {GroupMember.WORLD.rank()} which does not "
            "belong to the given group.",
            stacklevel=3,
        )
    return g


def _check_environment(size: int, rank: int, world_size: int, rank_arg: int) -> None:
    """Refuse a world that the launcher meant to be larger than the one MPI started."""
    expected = os.environ.get("WORLD_SIZE")
    if expected is not None and int(expected) != size:
        raise RuntimeError(
            f"WORLD_SIZE={expected} in the environment, but MPI started {size} process(es): "
            "start the processes with `mpirun -n N` or `python -m tocha.distributed.run "
            "--nproc-per-node N`, which start them as one MPI world"
        )
    if (world_size, rank_arg) != (-1, -1) and (world_size, rank_arg) != (size, rank):
        warnings.warn(
            f"For MPI backend, world_size ({world_size}) and rank ({rank_arg}) are ignored "
            "since they are assigned by the MPI runtime.",
            stacklevel=3,
        )


def _mpi_not_started() -> bool:
    """Whether this process was started apart from the others (not by an MPI launcher) and
    has not started MPI yet, so that it can still meet them before MPI starts."""
    from ._join import started_by_mpi

    return "mpi4py.MPI" not in sys.modules and not started_by_mpi()


def _meets(name: Backend | None, init_method, world_size: int, rank: int, store) -> bool:
    """Whether the group is set up by a rendezvous, as PyTorch's gloo and nccl are: always for
    ``gloo``, never for ``mpi``; for no backend or ``nccl``, when the call or the environment
    gives one (``mpirun`` alone sets none of torchrun's variables)."""
    if name == Backend.MPI:
        return False
    if name == Backend.GLOO:
        return True
    given = init_method is not None or store is not None or (world_size, rank) != (-1, -1)
    return given or "RANK" in os.environ


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Initialize the default process group: every process of the MPI world.

    Args:
        backend: ``"gloo"`` or ``"mpi"`` (CPU tensors; both run on MPI), ``"nccl"`` (CUDA
            tensors through NCCL, bootstrapped over MPI; CPU tensors still go through MPI) or
            ``"cpu:gloo,cuda:nccl"``. None is ``"gloo"`` when a rendezvous is given (an
            `init_method`, a rank and world size, or torchrun's variables), else ``"mpi"``.
        init_method: ``"env://"`` (the default: ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``
            and ``WORLD_SIZE`` from the environment), ``"tcp://host:port"`` or
            ``"file://path"`` (with `rank` and `world_size`). PyTorch's missing-parameter
            errors are raised; the rank and world size must then be those the launcher gave
            the process. The ``mpi`` backend ignores it, as PyTorch's does.
        timeout: how long a collective waits for the other ranks before raising
            `DistBackendError` (default 30 minutes).
        world_size, rank: the expected world size and this process's rank; the ``mpi``
            backend ignores them (with a warning when they differ from MPI's), as
            PyTorch's does.
        store: a store object in place of `init_method` (only its presence is used).
        group_name, pg_options, device_id: accepted for compatibility.

    A process started alone, without a launcher, is a world of one::

        >>> import tocha.distributed as dist
        >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500",
        ...                         rank=0, world_size=1)
        >>> dist.get_rank(), dist.get_world_size()
        (0, 1)
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    chosen = None if backend is None else Backend(backend).check()
    timeout = default_pg_timeout if timeout is None else timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got {timeout}"
        )
    meeting = None
    if _meets(chosen, init_method, world_size, rank, store):
        from ._rendezvous import check_rank, rendezvous

        meeting = rendezvous(init_method, rank, world_size, store)
        check_rank(meeting)
    joining = meeting is not None and meeting.world_size > 1 and _mpi_not_started()
    if joining:
        from ._join import join

        join(meeting, meeting.file, timeout, store)
    if "mpi4py.MPI" not in sys.modules:
        from ._exit import take_over_finalize

        take_over_finalize(finalize=not joining)
    from mpi4py import MPI

    if joining:
        from ._join import forget

        forget()

    from ._mpi import ProcessGroupMPI

    world = MPI.COMM_WORLD
    if meeting is None:
        _check_environment(world.Get_size(), world.Get_rank(), world_size, rank)
        name = chosen or Backend(Backend.MPI)
    else:
        from ._rendezvous import match_world

        match_world(meeting, world.Get_rank(), world.Get_size())
        name = chosen or Backend(Backend.GLOO)
    mpi = ProcessGroupMPI(world.Dup(), timeout)
    ranks = list(range(mpi.size))
    GroupMember.WORLD = ProcessGroup(name, mpi, ranks, _nccl(name, mpi, device_id))
    _GROUPS.append(GroupMember.WORLD)


def _nccl(name: Backend, mpi, device_id):
    """The NCCL communicator of a group whose backend uses NCCL (None otherwise)."""
    if not name.uses_nccl():
        return None
    from ._nccl import ProcessGroupNCCL

    return ProcessGroupNCCL(mpi, device_id)


def new_group(
    ranks: list[int] | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options=None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id=None,
):
    """A group of some of the ranks (all of them when `ranks` is None).

    Every rank of the default group must call it, with the same `ranks`; the ranks outside
    the group get ``GroupMember.NON_GROUP_MEMBER``, on which collectives do nothing.
    """
    world = _world()
    members = sorted(set(range(world.size()) if ranks is None else ranks))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(
                f"Rank {r} is out of range. Valid ranks are 0 to {world.size() - 1} "
                f"(world_size={world.size()})"
            )
    from mpi4py import MPI

    from ._mpi import ProcessGroupMPI

    me = world.rank()
    inside = me in members
    comm = world._mpi.comm.Split(0 if inside else MPI.UNDEFINED, me)
    if not inside:
        _OUTSIDE[0] += 1
        return GroupMember.NON_GROUP_MEMBER
    mpi = ProcessGroupMPI(comm, world._mpi.timeout if timeout is None else timeout)
    name = Backend(backend).check() if backend is not None else world.name()
    made = ProcessGroup(name, mpi, members, _nccl(name, mpi, device_id))
    _GROUPS.append(made)
    return made


def new_subgroups(
    group_size: int | None = None,
    group=None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options=None,
    group_desc: str | None = None,
):
    """Split the default group into groups of `group_size` consecutive ranks; returns
    ``(the group of this rank, every group)`` (``NON_GROUP_MEMBER`` for the others)."""
    if group_size is None:
        raise ValueError(
            "Default group size only takes effect when CUDA is available.If your subgroup "
            "using a backend that does not depend on CUDA,please pass in 'group_size' "
            "correctly."
        )
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    size = get_world_size()
    if group_size > size:
        raise ValueError(
            f"The arg 'group_size' ({group_size}) must not exceed the world size ({size})"
        )
    if size % group_size:
        raise ValueError(
            f"The world size ({size}) must be divisible by 'group_size' ({group_size})"
        )
    ranks = [list(range(start, start + group_size)) for start in range(0, size, group_size)]
    return new_subgroups_by_enumeration(ranks, timeout, backend, pg_options, group_desc)


def new_subgroups_by_enumeration(
    ranks_per_subgroup_list: list[list[int]],
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options=None,
    group_desc: str | None = None,
):
    """One group per list of ranks (disjoint lists); returns ``(the group of this rank or
    None, every group)`` (``NON_GROUP_MEMBER`` for those this rank is outside of)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen: dict[int, list[int]] = {}
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(
                    f"Rank {r} has appeared in both subgroup {seen[r]} and {list(ranks)}"
                )
            seen[r] = list(ranks)
    me = get_rank()
    mine, groups = None, []
    for ranks in ranks_per_subgroup_list:
        made = new_group(ranks, timeout, backend, pg_options, group_desc=group_desc)
        groups.append(made)
        if me in ranks:
            mine = made
    return mine, groups


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free a group's communicators; with no argument, free every group and the default
    one, after which `init_process_group` may be called again.

    Raises AssertionError when there is no default group (never initialized, or destroyed
    already), ValueError for a group destroyed already, as PyTorch."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if GroupMember.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is not None and group not in _GROUPS:
        raise ValueError("Invalid process group specified")
    doomed = list(_GROUPS) if group is None or group is GroupMember.WORLD else [group]
    for g in doomed:
        if g._monitor is not None:
            g._monitor.comm.Free()
        g._mpi.comm.Free()
        _GROUPS.remove(g)
    if group is None or group is GroupMember.WORLD:
        GroupMember.WORLD = None
        _OUTSIDE[0] = 0


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in `group` (the default group when None); -1 outside `group`."""
    g = resolve(group)
    return -1 if g is None else g.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of ranks in `group` (the default group when None); -1 outside `group`."""
    g = resolve(group)
    return -1 if g is None else g.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend of `group` (the default group when None)."""
    g = resolve(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return g.name()


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of the members of `group`, in group-rank order."""
    g = resolve(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return list(g._ranks)


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in `group` of the process of rank `global_rank` in the default group."""
    g = resolve(group)
    if g is None or global_rank not in g._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return g._ranks.index(global_rank)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The rank in the default group of the process of rank `group_rank` in `group`."""
    g = resolve(group)
    if g is None or not 0 <= group_rank < len(g._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return g._ranks[group_rank]
