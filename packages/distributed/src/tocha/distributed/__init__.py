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

from ._batch import P2POp, batch_isend_irecv
from ._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    monitored_barrier,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from ._ddp import DistributedDataParallel, GradBucket
from ._group import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_global_rank,
    get_group_rank,
    get_node_local_rank,
    get_pg_count,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_backend_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    is_ucc_available,
    is_xccl_available,
    new_group,
    new_subgroups,
    new_subgroups_by_enumeration,
)
from ._objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from ._store import HashStore, PrefixStore, Store, TCPStore
from ._types import (
    Backend,
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    ReduceOp,
    default_pg_timeout,
    supports_complex,
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
    "GradBucket",
    "GroupMember",
    "HashStore",
    "P2POp",
    "PrefixStore",
    "ProcessGroup",
    "ReduceOp",
    "Store",
    "TCPStore",
    "Work",
    "__version__",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_default_backend_for_device",
    "get_global_rank",
    "get_group_rank",
    "get_node_local_rank",
    "get_pg_count",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_backend_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_ucc_available",
    "is_xccl_available",
    "isend",
    "monitored_barrier",
    "new_group",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "recv",
    "recv_object_list",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
    "send_object_list",
    "supports_complex",
]
