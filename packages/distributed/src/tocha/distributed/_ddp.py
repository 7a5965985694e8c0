"""`DistributedDataParallel`: data-parallel training, one process per replica.

At wrap time the ranks check that they hold the same model and take rank 0's parameters and
buffers. During backward, each parameter's post-accumulate-grad hook copies its gradient into
its bucket: as PyTorch, one bucket of every parameter for the first backward, then flat arrays
of about `bucket_cap_mb` (the first of at most 1 MiB) filled in the order the gradients became
ready then (the last layers' first); once a bucket and those before it are full, its non-blocking
all-reduce (or communication hook) starts, while backward goes on computing the earlier
layers. The hook of the last parameter waits for every bucket and writes the averaged
gradients back into ``.grad`` in place.
"""

from __future__ import annotations

import zlib
from contextlib import contextmanager

import numpy as np

import tocha
from tocha.library import backend_of, bump_version
from tocha.nn import Module

from ._group import resolve
from ._types import ReduceOp

__all__ = ["DistributedDataParallel", "GradBucket"]

MB = 1024 * 1024
# As PyTorch: one bucket for the first backward; then a small first bucket, so that the first
# all-reduce starts early.
UNLIMITED = float("inf")
FIRST_BUCKET_BYTES = 1 * MB
UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss."
)


class _Bucket:
    """Parameters whose gradients are all-reduced together, as one flat array."""

    __slots__ = ("params", "offsets", "flat", "xp", "pending", "work")

    def __init__(self, params: list) -> None:
        self.params = params
        sizes = [p.numel() for p in params]
        self.offsets = np.cumsum([0, *sizes]).tolist()
        self.xp = backend_of(params[0].device).xp
        self.flat = self.xp.empty(self.offsets[-1], params[0]._data.dtype)
        self.pending = len(params)
        self.work = None


class GradBucket:
    """What a communication hook gets: one bucket of gradients, flattened into `buffer`.

    The buffer holds this rank's gradients (not averaged); the hook returns a
    `tocha.futures.Future` whose value is the reduced buffer (a tensor, or a list whose
    first item is one), which DDP writes into the parameters' ``.grad``.
    """

    def __init__(self, index: int, bucket: _Bucket, last: bool) -> None:
        self._index = index
        self._bucket = bucket
        self._last = last
        self._buffer = tocha.from_numpy(bucket.flat)

    def index(self) -> int:
        """The bucket's index (0 holds the last parameters, whose gradients come first)."""
        return self._index

    def buffer(self) -> tocha.Tensor:
        """The flat tensor of the bucket's gradients."""
        return self._buffer

    def set_buffer(self, buffer: tocha.Tensor) -> None:
        """Replace the bucket's contents with `buffer`'s."""
        self._buffer.copy_(buffer)

    def gradients(self) -> list[tocha.Tensor]:
        """Each parameter's gradient, as a view of `buffer`."""
        b, flat = self._bucket, self._buffer
        return [flat[b.offsets[k] : b.offsets[k + 1]].view(p.shape) for k, p in enumerate(b.params)]

    def parameters(self) -> list[tocha.Tensor]:
        """The bucket's parameters, in bucket order."""
        return list(self._bucket.params)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the backward pass."""
        return self._last


def _buckets(params: list, limits: tuple[float, float]) -> list[_Bucket]:
    """`params`, in this order, cut into buckets of one dtype: a bucket closes once it holds
    at least its limit in bytes (``limits[0]`` for the first bucket, ``limits[1]`` after)."""
    buckets, current, nbytes = [], [], 0
    for p in params:
        if current and p.dtype != current[0].dtype:
            buckets.append(_Bucket(current))
            current, nbytes = [], 0
        current.append(p)
        nbytes += p._data.nbytes
        if nbytes >= limits[0 if not buckets else 1]:
            buckets.append(_Bucket(current))
            current, nbytes = [], 0
    if current:
        buckets.append(_Bucket(current))
    return buckets


def _tensors(obj):
    """The tensors in a (nested) forward output."""
    if isinstance(obj, tocha.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item)


def _reachable_leaves(outputs) -> set[int]:
    """The ids of the leaf tensors that the autograd graph of `outputs` leads to."""
    found, seen = set(), set()
    stack = [t.grad_fn for t in _tensors(outputs) if t.grad_fn is not None]
    found.update(id(t) for t in _tensors(outputs) if t.requires_grad and t.grad_fn is None)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        stack.extend(edge for edge, _ in node.next_functions)
    return found


class DistributedDataParallel(Module):
    """Data-parallel `module`: each rank runs it on its share of each batch, and backward
    leaves in ``.grad`` the gradients averaged over the ranks.

    Args:
        module: the model, the same on every rank.
        device_ids: None for a CPU model (one device per process for a CUDA model).
        output_device: accepted for compatibility.
        dim: accepted for compatibility (the batch is split by the user, e.g. with
            ``DistributedSampler``).
        broadcast_buffers: copy rank 0's buffers (BatchNorm's statistics) to every rank at
            each forward.
        init_sync: take rank 0's parameters and buffers at wrap time.
        process_group: the group of the replicas (the default group when None).
        bucket_cap_mb: the size of a gradient bucket, in MiB (default 25).
        find_unused_parameters: find, after each forward, the parameters it did not use, and
            count them as ready (their gradient is zero on this rank).

    Example::

        >>> dist.init_process_group("mpi")
        >>> model = DistributedDataParallel(nn.Linear(10, 1))
        >>> loss_fn(model(x), y).backward()  # .grad: the average over the ranks
        >>> with model.no_sync():  # gradient accumulation: no communication
        ...     loss_fn(model(x2), y2).backward()
    """

    def __init__(
        self,
        module: Module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group=None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ) -> None:
        super().__init__()
        devices = {p.device for p in module.parameters()}
        if device_ids and devices == {tocha.device("cpu")}:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters {devices}."
            )
        self.module = module
        self.process_group = resolve(process_group)
        self.device_ids = None if not device_ids else list(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * MB)
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._verify_same_model()
        if init_sync:
            self._broadcast(list(module.parameters()))
            self._broadcast_buffers()
        self._layout(list(self._params), (UNLIMITED, UNLIMITED))
        self._ready_order: list[int] | None = []
        self._index = {id(p): i for i, p in enumerate(self._params)}
        self._ready = 0
        self._used = np.ones(len(self._params), np.int32)
        self._handles = [p.register_post_accumulate_grad_hook(self._hook) for p in self._params]
        self._comm_hook = None
        self._comm_state = None
        self._join = None
        self._active = None

    # -- wrap time ----------------------------------------------------------------------------
    def _backend(self):
        device = self._params[0].device.type if self._params else "cpu"
        return self.process_group.backend_for(device)

    def _verify_same_model(self) -> None:
        g = self.process_group
        signature = ";".join(f"{list(p.shape)}{p.dtype}" for p in self._params)
        mine = np.array([len(self._params), zlib.crc32(signature.encode())], np.int64)
        every = np.empty((g.size(), 2), np.int64)
        g._mpi.allgather(every, mine, "DistributedDataParallel's model check").wait()
        for j in range(g.size()):
            if every[j, 0] != mine[0]:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {g.rank()} has "
                    f"{mine[0]} params, while rank {j} has inconsistent {every[j, 0]} params."
                )
            if every[j, 1] != mine[1]:
                raise RuntimeError(
                    "DDP expects same model across all ranks, but the shapes or dtypes of the "
                    f"parameters of rank {g.rank()} differ from those of rank {j}."
                )

    def _broadcast(self, tensors: list, root: int = 0) -> None:
        """Rank `root`'s `tensors` into every rank's, in place, all started at once."""
        works = [self._backend().broadcast(t._data, root) for t in tensors if t.numel()]
        for work in works:
            work.wait()
        for t in tensors:
            bump_version(t)

    def _broadcast_buffers(self) -> None:
        self._broadcast([b for b in self.module.buffers() if b is not None])

    def _layout(self, order: list, limits: tuple[int, int]) -> None:
        """Cut the parameters, in `order`, into buckets."""
        self._buckets = _buckets(order, limits)
        self._where = {}
        for b, bucket in enumerate(self._buckets):
            for k, p in enumerate(bucket.params):
                self._where[id(p)] = (b, k)
        self._next = 0

    def _rebuild(self) -> None:
        """After the first backward, as PyTorch: cut the buckets again in the order the
        gradients became ready (rank 0's), the first of at most 1 MiB, the others of
        `bucket_bytes_cap`."""
        order, self._ready_order = self._ready_order, None
        if order is None or len(order) != len(self._params):
            return
        ranks = np.array(order, np.int64)
        self.process_group._mpi.broadcast(ranks, 0).wait()
        cap = self.bucket_bytes_cap
        order = [self._params[i] for i in ranks.tolist()]
        self._layout(order, (min(cap, FIRST_BUCKET_BYTES), cap))

    # -- forward ------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._ready:
            raise RuntimeError(UNFINISHED)
        if self._join is not None and self.require_backward_grad_sync and tocha.is_grad_enabled():
            self._join.check(self._join.count())
        if self.broadcast_buffers and self.process_group.size() > 1:
            self._broadcast_buffers()
        output = self.module(*inputs, **kwargs)
        if (
            self.find_unused_parameters
            and self.require_backward_grad_sync
            and tocha.is_grad_enabled()
        ):
            self._mark_unused(output)
        return output

    def _mark_unused(self, output) -> None:
        """Count the parameters that `output` does not depend on as ready, with zeros."""
        used = _reachable_leaves(output)
        self._used[:] = 1
        for i, p in enumerate(self._params):
            if id(p) not in used:
                self._used[i] = 0
                b, k = self._where[id(p)]
                bucket = self._buckets[b]
                bucket.flat[bucket.offsets[k] : bucket.offsets[k + 1]] = 0
                self._mark_ready(bucket, p)

    # -- backward -----------------------------------------------------------------------------
    def _hook(self, param) -> None:
        if not self.require_backward_grad_sync:
            return
        b, k = self._where[id(param)]
        bucket = self._buckets[b]
        bucket.flat[bucket.offsets[k] : bucket.offsets[k + 1]] = param.grad._data.reshape(-1)
        self._mark_ready(bucket, param)

    def _mark_ready(self, bucket: _Bucket, param) -> None:
        bucket.pending -= 1
        self._ready += 1
        if self._ready_order is not None:
            self._ready_order.append(self._index[id(param)])
        buckets = self._buckets
        while self._next < len(buckets) and buckets[self._next].pending == 0:
            self._launch(self._next)  # in bucket order, the same on every rank
            self._next += 1
        for other in self._buckets:  # drive the transfers already started
            if other.work is not None:
                other.work.done() if self._comm_hook else other.work.is_completed()
        if self._ready == len(self._params):
            self._finalize()

    def _launch(self, index: int) -> None:
        bucket = self._buckets[index]
        if self._comm_hook is not None:
            last = index == len(self._buckets) - 1
            bucket.work = self._comm_hook(self._comm_state, GradBucket(index, bucket, last))
        else:
            bucket.work = self._backend().allreduce(bucket.flat, ReduceOp.SUM)

    def _finalize(self) -> None:
        """Wait for every bucket and write the averaged gradients into ``.grad``."""
        g = self.process_group
        used = None
        if self.find_unused_parameters:
            used = self._used.copy()
            g._mpi.allreduce(used, ReduceOp.MAX).wait()
        scale = 1.0 / (self._active or g.size())
        index = {id(p): i for i, p in enumerate(self._params)} if used is not None else None
        for bucket in self._buckets:
            reduced = bucket.work.wait()
            if self._comm_hook is not None:
                bucket.flat[...] = self._hooked_value(reduced)._data.reshape(-1)
                scale = 1.0
            for k, p in enumerate(bucket.params):
                if used is not None and not used[index[id(p)]]:
                    continue
                if p.grad is None:
                    p.grad = tocha.zeros_like(p)
                flat = bucket.flat[bucket.offsets[k] : bucket.offsets[k + 1]]
                grad = p.grad._data
                if grad.flags.c_contiguous:
                    bucket.xp.multiply(flat, scale, out=grad.reshape(-1))
                else:
                    grad[...] = (flat * scale).reshape(grad.shape)
                bump_version(p.grad)
            bucket.work = None
            bucket.pending = len(bucket.params)
        self._ready = 0
        self._next = 0
        if self._ready_order is not None:
            self._rebuild()

    @staticmethod
    def _hooked_value(value) -> tocha.Tensor:
        if isinstance(value, (list, tuple)) and value:
            value = value[0]
        if not isinstance(value, tocha.Tensor):
            raise RuntimeError(
                "The value of the future a communication hook returns must be a tensor (or a "
                f"list holding one), got {type(value).__name__}"
            )
        return value

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each bucket with ``hook(state, bucket)`` (a `GradBucket`) instead of the
        built-in average; the hook returns a `tocha.futures.Future` of the reduced bucket,
        averaged by the hook itself.

        Example::

            >>> def allreduce_mean(state, bucket):
            ...     tensor = bucket.buffer().div_(dist.get_world_size())
            ...     work = dist.all_reduce(tensor, async_op=True)
            ...     return work.get_future().then(lambda fut: fut.value()[0])
            >>> ddp.register_comm_hook(None, allreduce_mean)
        """
        if self._comm_hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        if not callable(hook):
            raise TypeError(f"Communication hook must be callable, got {type(hook).__name__}")
        self._comm_hook, self._comm_state = hook, state

    def join(
        self,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
    ):
        """A context manager for uneven inputs: a rank that leaves its training loop early
        keeps taking part in the others' gradient reductions, with zero gradients, until
        every rank has left.

        Args:
            divide_by_initial_world_size: average over the initial world size (else over
                the ranks still training at each iteration).
            enable: False turns the context manager off.
            throw_on_early_termination: raise RuntimeError on every rank as soon as one
                runs out of inputs.

        Example::

            >>> with ddp.join():
            ...     for x in my_batches:  # not the same number on every rank
            ...         ddp(x).sum().backward()
        """
        from .algorithms.join import Join

        return Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def shadow_step(self) -> None:
        """One iteration of a rank that has joined: receive the buffers and take part in
        each bucket's reduction (or hook) with zeros; its own ``.grad`` are left as they
        are, as PyTorch's."""
        g = self.process_group
        if self.broadcast_buffers and g.size() > 1:
            self._broadcast_buffers()
        for index, bucket in enumerate(self._buckets):
            bucket.flat[...] = 0
            self._launch(index)
        for bucket in self._buckets:
            bucket.work.wait()
            bucket.work = None
        if self.find_unused_parameters:
            g._mpi.allreduce(np.zeros_like(self._used), ReduceOp.MAX).wait()

    @contextmanager
    def no_sync(self):
        """Within it, backward accumulates gradients locally, with no communication; the
        first backward after it averages what was accumulated.

        Example::

            >>> with ddp.no_sync():
            ...     ddp(x1).sum().backward()
            >>> ddp(x2).sum().backward()  # synchronizes x1's and x2's gradients
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
