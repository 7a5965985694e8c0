"""Batched point to point: `P2POp` describes one send or receive, `batch_isend_irecv`
starts a list of them at once (the ring exchanges of pipeline and ring algorithms)."""

from __future__ import annotations

from . import _collectives

__all__ = ["P2POp", "batch_isend_irecv"]


class P2POp:
    """One point-to-point operation for `batch_isend_irecv`.

    Args:
        op: ``dist.isend`` or ``dist.irecv``.
        tensor: the tensor to send, or to receive into.
        peer: the rank (of the default group) to send to or receive from.
        group: the process group (the default group when None).
        tag: matches a send with a receive.
        group_peer: the peer as a rank of `group`, in place of `peer`.
    """

    def __init__(self, op, tensor, peer=None, group=None, tag: int = 0, group_peer=None):
        if op not in (_collectives.isend, _collectives.irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                "``torch.distributed.irecv``."
            )
        self.op = op
        self.tensor = tensor
        self.peer = peer
        self.group = group
        self.tag = tag
        self.group_peer = group_peer

    def __repr__(self) -> str:
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list:
    """Start every send and receive of `p2p_op_list` and return their `Work` handles, in
    the same order; ``wait()`` on each before using the received tensors."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError(
            "Invalid ``p2p_op_list``. Each op is expected to to be of type "
            "``torch.distributed.P2POp``."
        )
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]
