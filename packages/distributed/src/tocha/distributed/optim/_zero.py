"""`ZeroRedundancyOptimizer`: each rank keeps the optimizer state of its share of the
parameters only (ZeRO stage 1), steps that share, and then hands the updated values to the
other ranks."""

from __future__ import annotations

from typing import Any

from tocha.library import bump_version
from tocha.optim import Optimizer

from .._group import get_global_rank, resolve
from .._objects import gather_object

__all__ = ["ZeroRedundancyOptimizer"]

NOT_CONSOLIDATED = (
    "Optimizer state has not been consolidated on this rank. Please call "
    "`consolidate_state_dict(to)` on all ranks beforehand if you meant to save the global "
    "state."
)


def _options(group: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in group.items() if k != "params"}


class ZeroRedundancyOptimizer(Optimizer):
    """Wraps `optimizer_class` so that its state is sharded over the ranks of
    `process_group`.

    The parameters of each group are shared out greedily, largest first, to the rank that
    holds the fewest elements so far. Each rank builds an `optimizer_class` (with
    ``**defaults``) over its share only; `step` steps it and then broadcasts every parameter
    from the rank that owns it, so that all ranks end with the same parameters, as a plain
    optimizer on every rank would give them.

    Args:
        params: the parameters, or parameter groups, of the whole model.
        optimizer_class: the optimizer to shard (``torch.optim.Adam``...).
        process_group: the ranks to shard over (the default group when None).
        parameters_as_bucket_view: accepted; the parameters keep their own storage.
        overlap_with_ddp: not supported (it needs DDP communication hooks).
        **defaults: the options of `optimizer_class` (``lr=...``).

    Example::

        >>> opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam,
        ...                               lr=0.01)
        >>> loss_fn(ddp(x), y).backward()
        >>> opt.step()
        >>> opt.consolidate_state_dict(to=0)  # on every rank, before state_dict() on rank 0
    """

    def __init__(
        self,
        params,
        optimizer_class: type[Optimizer],
        process_group=None,
        parameters_as_bucket_view: bool = False,
        overlap_with_ddp: bool = False,
        **defaults: Any,
    ) -> None:
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True) is not in tocha: it needs "
                "DistributedDataParallel communication hooks"
            )
        self.process_group = resolve(process_group)
        self.world_size = self.process_group.size()
        self.rank = self.process_group.rank()
        self.optimizer_class = optimizer_class
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._owners: dict[int, int] = {}
        self._order: list = []
        self._load = [0] * self.world_size
        self._consolidated: list | None = None
        super().__init__(params, defaults)
        self.optim = optimizer_class(self._local_groups(), **defaults)
        for group in self.param_groups:  # the options that optimizer_class adds, as its own
            for key, value in self.optim.defaults.items():
                group.setdefault(key, value)

    # -- partition ----------------------------------------------------------------------------
    def _share_out(self, params: list) -> None:
        """Give each of `params` an owner: largest first, to the least loaded rank."""
        for p in sorted(params, key=lambda t: t.numel(), reverse=True):
            if id(p) in self._owners:
                continue
            owner = self._load.index(min(self._load))
            self._owners[id(p)] = owner
            self._order.append(p)
            self._load[owner] += p.numel()

    def _owned(self, group: dict[str, Any], rank: int) -> list:
        """`rank`'s parameters of `group`, largest first (the order they were shared out)."""
        members = {id(p) for p in group["params"]}
        return [p for p in self._order if id(p) in members and self._owners[id(p)] == rank]

    def _local_groups(self) -> list[dict[str, Any]]:
        return [{**_options(g), "params": self._owned(g, self.rank)} for g in self.param_groups]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group; its parameters are shared out among the ranks."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        self._share_out(group["params"])
        if "optim" in self.__dict__:
            self.optim.add_param_group({**_options(group), "params": self._owned(group, self.rank)})

    # -- step ---------------------------------------------------------------------------------
    def step(self, closure=None, **kwargs):
        """Step this rank's share (with the groups' current options, which schedulers may
        have changed), then broadcast every parameter from its owner."""
        for group, local in zip(self.param_groups, self.optim.param_groups):
            local.update(_options(group))
        loss = (
            self.optim.step(closure, **kwargs)
            if closure is not None or kwargs
            else self.optim.step()
        )
        backend = self.process_group.backend_for
        works, params = [], []
        for group in self.param_groups:
            for p in group["params"]:
                root = self._owners[id(p)]
                works.append(backend(p.device.type).broadcast(p._data, root))
                params.append(p)
        for work in works:
            work.wait()
        for p in params:
            bump_version(p)
        self._consolidated = None
        return loss

    # -- state --------------------------------------------------------------------------------
    def _global_indices(self, rank: int) -> list[int]:
        """For each of `rank`'s local parameters, in its optimizer's order, the index of the
        parameter in the whole optimizer."""
        index = {}
        for p in (p for g in self.param_groups for p in g["params"]):
            index.setdefault(id(p), len(index))
        return [index[id(p)] for g in self.param_groups for p in self._owned(g, rank)]

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's share of the state on rank `to` (a collective: call it on every
        rank), so that `state_dict` there returns the whole optimizer's."""
        root = get_global_rank(self.process_group, to)
        mine = self.optim.state_dict()["state"]
        gathered = [None] * self.world_size if self.rank == to else None
        gather_object(mine, gathered, dst=root, group=self.process_group)
        self._consolidated = gathered

    def state_dict(self) -> dict[str, Any]:
        """The whole optimizer's state, ``{"state": ..., "param_groups": ...}``, as a plain
        `optimizer_class` would give it; only on the rank that `consolidate_state_dict`
        gathered on."""
        if self._consolidated is None:
            raise RuntimeError(NOT_CONSOLIDATED)
        state = {}
        for rank, shard in enumerate(self._consolidated):
            indices = self._global_indices(rank)
            for local, value in shard.items():
                state[indices[local]] = value
        groups, start = [], 0
        for group in self.param_groups:
            count = len(group["params"])
            groups.append({**_options(group), "params": list(range(start, start + count))})
            start += count
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a whole optimizer's state (as `state_dict` gives it): the groups' options
        everywhere, and on each rank the state of its own share."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups):
            group.update(_options(saved))
        indices = self._global_indices(self.rank)
        local_state = {
            local: state_dict["state"][index]
            for local, index in enumerate(indices)
            if index in state_dict["state"]
        }
        local_groups, start = [], 0
        for group in self.param_groups:
            count = len(self._owned(group, self.rank))
            local_groups.append({**_options(group), "params": list(range(start, start + count))})
            start += count
        self.optim.load_state_dict({"state": local_state, "param_groups": local_groups})
