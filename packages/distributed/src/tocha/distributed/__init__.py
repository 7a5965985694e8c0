"""``tocha.distributed``: PyTorch's ``torch.distributed`` on MPI (mpi4py) and NCCL (CuPy).

Start the processes with ``python -m tocha.distributed.run --nproc_per_node N train.py``
(torchrun's arguments), ``mpirun -n N python train.py``, or from Python with
``tocha.multiprocessing.spawn`` / ``multiprocessing.Process`` and a ``tcp://``, ``env://`` or
``file://`` rendezvous, where the workers meet at rank 0's address (a process started alone is
a world of one); then::

    import tocha as torch
    import tocha.distributed as dist

    dist.init_process_group("gloo")  # PyTorch's CPU backend name; MPI carries it
    t = torch.ones(3) * dist.get_rank()
    dist.all_reduce(t)
    model = dist.DistributedDataParallel(model)  # also tocha.nn.parallel's

Importing this module does not start MPI: `init_process_group` does.
"""

from ._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter_tensor,
    scatter,
    send,
)
from ._ddp import DistributedDataParallel
from ._group import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from ._objects import all_gather_object, broadcast_object_list, gather_object
from ._types import (
    Backend,
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    ReduceOp,
    default_pg_timeout,
)
from ._version import __version__
from ._work import Work

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "DistributedDataParallel",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "__version__",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]
