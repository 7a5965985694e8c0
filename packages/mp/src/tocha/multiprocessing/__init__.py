"""tocha.multiprocessing: the standard `multiprocessing` with tensors shared, not copied.

Every public name of `multiprocessing` is here (``Process``, ``Queue``, ``Pipe``, ``Pool``,
``get_context``...). Importing this module registers reducers with multiprocessing's
``ForkingPickler``, so a tensor sent through any queue, pipe, pool or process argument, in
any start method, is moved to shared memory (`Tensor.share_memory_`) and arrives in the other
process over the same memory: no copy, writes on either side are seen by the other. A cuda
tensor is sent as a CUDA IPC handle of its GPU memory (tocha-cuda); as in PyTorch, the
sending process must keep it alive while others use it.

Example::

    >>> import tocha as torch
    >>> import tocha.multiprocessing as mp
    >>> def work(t):
    ...     t.fill_(1)
    >>> t = torch.zeros(3)
    >>> p = mp.Process(target=work, args=(t,)); p.start(); p.join()
    >>> t
    tensor([1., 1., 1.])
"""

import multiprocessing
from multiprocessing import *  # noqa: F403

from tocha import Tensor

from ._reductions import init_reductions
from ._sharing import (
    get_all_sharing_strategies,
    get_sharing_strategy,
    is_shared,
    set_sharing_strategy,
    share_memory_,
)
from ._version import __version__  # noqa: F401
from .spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = [
    "set_sharing_strategy",
    "get_sharing_strategy",
    "get_all_sharing_strategies",
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "spawn",
    "start_processes",
    *multiprocessing.__all__,
]

Tensor.share_memory_ = share_memory_
Tensor.is_shared = is_shared
init_reductions()
