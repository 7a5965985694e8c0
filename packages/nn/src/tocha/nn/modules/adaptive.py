"""Adaptive softmax, as ``torch.nn.modules.adaptive``: AdaptiveLogSoftmaxWithLoss."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import tocha
from tocha import Tensor
from tocha.library import TITLE

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation (Grave et al.): the most frequent classes (below
    ``cutoffs[0]``) and one entry per cluster of rarer classes share a head `Linear`; each
    cluster (between consecutive cutoffs) has its own two-layer projection, narrower by
    `div_value` per cluster.

    Args:
        in_features: size of each input sample.
        n_classes: number of classes; labels must be sorted by frequency (0 the most).
        cutoffs: increasing cluster boundaries, each in ``[1, n_classes - 1]``.
        div_value: the factor by which each cluster's hidden size shrinks.
        head_bias: whether the head has a bias.

    ``forward(input, target)`` returns ``(output, loss)``: each sample's log-probability of
    its target, and their negated mean. `log_prob` gives every class's log-probability and
    `predict` the most likely class.

    Example:
        >>> m = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12])
        >>> out = m(tocha.randn(4, 8), tocha.tensor([0, 6, 13, 19]))
        >>> out.output.shape, out.loss.shape
        (torch.Size([4]), torch.Size([]))
    """

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **factory),
                    Linear(hidden, size, bias=False, **factory),
                )
            )

    def reset_parameters(self) -> None:
        """Re-initialize the head and every cluster's projections."""
        self.head.reset_parameters()
        for layer in self.tail.modules():
            if isinstance(layer, Linear):
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"{_size(input_)}"
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"{_size(input_)}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)

        # Each row's head column: its class in the shortlist, else its cluster's entry; rows of
        # a cluster add their log-probability within the cluster.
        head_column = target.clone()
        within = input.new_zeros(target.size(0))
        used = 0
        for i, (low, high) in enumerate(zip([0] + self.cutoffs, self.cutoffs)):
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().view(-1)
            if rows.numel() == 0:
                continue
            used += rows.numel()
            if i == 0:
                continue
            head_column = head_column.index_fill(0, rows, self.shortlist_size + i - 1)
            logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local = logprob.gather(1, (target[mask] - low).unsqueeze(1)).squeeze(1)
            within = within.index_copy(0, rows, local)
        if used != target.size(0):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = within + head_logprob.gather(1, head_column.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        if head_output.dim() > 2:
            raise RuntimeError(
                f"expand(torch.{TITLE[head_output.dtype]}Tensor{{{list(head_output.shape)}}}, "
                f"size=[{head_output.size(0)}, {self.shortlist_size}]): the number of sizes "
                "provided (2) must be greater or equal to the number of dimensions in the "
                f"tensor ({head_output.dim()})"
            )
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, : self.shortlist_size]]
        for i, cluster in enumerate(self.tail):
            logprob = F.log_softmax(cluster(input), dim=1)
            pieces.append(logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return tocha.cat(pieces, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Every class's log-probability: ``(N, in_features)`` -> ``(N, n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each sample (``argmax`` of `log_prob`, computed only for
        the samples whose head prediction is a cluster)."""
        head_output = self.head(input)
        output = tocha.argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return tocha.argmax(self._full_log_prob(input, head_output), dim=1)
        log_prob = self._full_log_prob(input[outside], head_output[outside])
        output[outside] = tocha.argmax(log_prob, dim=1)
        return output


def _size(t: Tensor) -> str:
    return f"torch.Size([{', '.join(map(str, t.shape))}])"
