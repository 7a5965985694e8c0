"""Recurrent layers, as ``torch.nn.modules.rnn``: RNN, LSTM, GRU and their cells.

Parameters are named and ordered as PyTorch's (``weight_ih_l0``, ``weight_hh_l0``,
``bias_ih_l0``, ``bias_hh_l0``, ``weight_hr_l0``, then ``*_reverse``), so state dicts
interchange. Each layer of a stack runs as one autograd node (see ``_functional/rnn.py``).
"""

from __future__ import annotations

import math
import numbers
import warnings

import tocha
from tocha import Tensor

from .. import init
from .._functional import rnn as F_rnn
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]


def _check_type(value, kind, name: str) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


class RNNBase(Module):
    """The base of RNN, LSTM and GRU: parameters, checks and the run over a sequence.

    Args:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        input_size: features of the input.
        hidden_size: features of the hidden state.
        num_layers: recurrent layers stacked.
        bias: whether the layers have ``b_ih`` and ``b_hh``.
        batch_first: inputs and outputs ``(B, T, *)`` instead of ``(T, B, *)``.
        dropout: dropout probability on the outputs of every layer but the last.
        bidirectional: run each layer both ways and concatenate the two outputs.
        proj_size: (LSTM) project the hidden state to this size.
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        _check_type(bias, bool, "bias")
        _check_type(batch_first, bool, "batch_first")
        _check_type(input_size, int, "input_size")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        _check_type(hidden_size, int, "hidden_size")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in F_rnn.GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = F_rnn.GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                shapes = {
                    "weight_ih": (gate_size, layer_input_size),
                    "weight_hh": (gate_size, real_hidden_size),
                }
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for stem, shape in shapes.items():
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(tocha.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        """The parameters in PyTorch's flat order (always the current ones)."""
        return [getattr(self, name, None) for name in self._flat_weights_names]

    def __getstate__(self):
        # PyTorch's RNN modules pickle the list of their weights; torch.load of a whole tocha
        # RNN needs it there.
        return {**super().__getstate__(), "_flat_weights": self._flat_weights}

    def __setstate__(self, state) -> None:
        # here `_flat_weights` is a property, always current: the pickled list is dropped
        super().__setstate__({k: v for k, v in state.items() if k != "_flat_weights"})

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters, one list per layer and direction."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: the parameters need no flat buffer here (PyTorch's is for cuDNN)."""

    def reset_parameters(self) -> None:
        """Every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _state_sizes(self) -> tuple:
        """Features of h (and, for LSTM, c)."""
        if self.mode == "LSTM":
            return (self.proj_size or self.hidden_size, self.hidden_size)
        return (self.hidden_size,)

    def check_input(self, input: Tensor, batch_sizes) -> None:
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype})."
                f" Convert input: input.to({weight.dtype}), or convert model: "
                f"model.to({input.dtype})"
            )
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes) -> tuple[int, int, int]:
        """``(num_layers * num_directions, batch, hidden features)`` for `input` (the data of
        a packed sequence when `batch_sizes` is given)."""
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        layers = self.num_layers * (2 if self.bidirectional else 1)
        return (layers, batch, self._state_sizes()[0])

    def check_hidden_size(
        self, hx: Tensor, expected_hidden_size, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        """RuntimeError(`msg`) unless `hx` has the shape `expected_hidden_size`."""
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes) -> None:
        """Check `input` and the initial hidden state as forward does."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        """`hx` with its batch dim (1) reordered by `permutation` (None: unchanged)."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def _check_states(self, hx: tuple, batch: int) -> None:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        lstm = self.mode == "LSTM"
        for k, (h, size) in enumerate(zip(hx, self._state_sizes())):
            expected = (layers, batch, size)
            if tuple(h.shape) != expected:
                what = f"hidden[{k}] size" if lstm else "hidden size"
                raise RuntimeError(f"Expected {what} {expected}, got {list(h.shape)}")

    def _run(self, input, hx):
        """The forward of RNN, LSTM and GRU. `hx` is None, a Tensor or (LSTM) a pair."""
        lstm = self.mode == "LSTM"
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = tuple(batch_sizes.tolist())
            batch, unbatched = sizes[0], False
        else:
            if input.dim() not in (2, 3):
                word = " tensor" if name == "RNN" else ""
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{word} instead"
                )
            unbatched = input.dim() == 2
            if unbatched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            batch_sizes = sorted_indices = unsorted_indices = None
            batch = input.shape[0 if self.batch_first else 1]
        hx = self._initial_states(hx, input, batch, unbatched, packed)
        self.check_input(data if packed else input, batch_sizes)
        self._check_states(hx, batch)
        if sorted_indices is not None:
            hx = tuple(h.index_select(1, sorted_indices) for h in hx)
        if not packed:
            x = input.transpose(0, 1) if self.batch_first else input
            steps = x.shape[0]
            data, sizes = x.reshape(steps * batch, x.shape[2]), (batch,) * steps
        out, *states = F_rnn.rnn(
            self.mode,
            data,
            sizes,
            hx,
            self._flat_weights,
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
            self.proj_size > 0,
        )
        if unsorted_indices is not None:
            states = [h.index_select(1, unsorted_indices) for h in states]
        if packed:
            output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = out.reshape(steps, batch, out.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if unbatched:
                output = output.squeeze(0 if self.batch_first else 1)
                states = [h.squeeze(1) for h in states]
        return output, (tuple(states) if lstm else states[0])

    def _initial_states(self, hx, input, batch: int, unbatched: bool, packed: bool) -> tuple:
        """The initial states as a tuple of 3-D tensors (zeros when `hx` is None)."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        data = input.data if packed else input
        if hx is None:
            return tuple(
                tocha.zeros((layers, batch, size), dtype=data.dtype, device=data.device)
                for size in self._state_sizes()
            )
        lstm = self.mode == "LSTM"
        hx = (hx[0], hx[1]) if lstm else (hx,)
        if packed:
            return hx
        want = 2 if unbatched else 3
        if any(h.dim() != want for h in hx):
            kind = "unbatched 2-D" if unbatched else "batched 3-D"
            if lstm:
                dims = f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {want}-D but got {dims}"
                )
            raise RuntimeError(
                f"For {kind} input, hx should also be {want}-D but got {hx[0].dim()}-D tensor"
            )
        return tuple(h.unsqueeze(1) for h in hx) if unbatched else hx

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t @ W_ih.T + b_ih + h_(t-1) @ W_hh.T + b_hh)`` (or relu).

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional: as
            `RNNBase`.
        nonlinearity: ``"tanh"`` or ``"relu"``.

    Shape:
        input ``(T, B, input_size)`` (``(B, T, *)`` if batch_first), ``(T, input_size)``
        unbatched, or a `PackedSequence`; hx ``(num_layers * num_directions, B, hidden_size)``.
        Returns ``(output, h_n)``, output ``(T, B, num_directions * hidden_size)``.

    Example:
        >>> out, h = nn.RNN(10, 20, 2)(tocha.randn(5, 3, 10))
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx: Tensor | None = None):
        return self._run(input, hx)


class LSTM(RNNBase):
    """Long short-term memory: ``i, f, g, o`` gates, ``c_t = f * c_(t-1) + i * g``,
    ``h_t = o * tanh(c_t)`` (then ``h_t @ W_hr.T`` with proj_size).

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
        proj_size: as `RNNBase`.

    Shape:
        input as `RNN`; hx ``(h_0, c_0)``. Returns ``(output, (h_n, c_n))``.

    Example:
        >>> out, (h, c) = nn.LSTM(10, 20, 2)(tocha.randn(5, 3, 10))
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes) -> tuple[int, int, int]:
        """``(num_layers * num_directions, batch, hidden_size)``: the shape of the cell
        state for `input`."""
        layers, batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return (layers, batch, self.hidden_size)

    def check_forward_args(  # type: ignore[override]
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes
    ) -> None:
        """Check `input` and the initial ``(h, c)`` as forward does."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(  # type: ignore[override]
        self, hx: tuple[Tensor, Tensor], permutation: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        """``(h, c)`` with their batch dim (1) reordered by `permutation`."""
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx: tuple[Tensor, Tensor] | None = None):
        return self._run(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit: ``r, z = sigmoid(...)``, ``n = tanh(W_in x + b_in + r * (W_hn h +
    b_hn))``, ``h_t = (1 - z) * n + z * h_(t-1)``.

    Shape:
        as `RNN`. Returns ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx: Tensor | None = None):
        return self._run(input, hx)


class RNNCellBase(Module):
    """The base of the cells: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``, all
    from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(tocha.empty((gates, input_size), **kw))
        self.weight_hh = Parameter(tocha.empty((gates, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(tocha.empty(gates, **kw))
            self.bias_hh = Parameter(tocha.empty(gates, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, name: str, cell, input: Tensor, hx: tuple, n_states: int):
        """Check dims, add the batch dim of an unbatched input, run `cell`, remove it."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for k, h in enumerate(hx or ()):
            if h.dim() not in (1, 2):
                what = "hidden" if n_states == 1 else f"hx[{k}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = tocha.zeros(
                (input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device
            )
            hx = (zeros,) * n_states
        elif unbatched:
            hx = tuple(h.unsqueeze(0) for h in hx)
        out = cell(
            input,
            hx[0] if n_states == 1 else hx,
            self.weight_ih,
            self.weight_hh,
            self.bias_ih,
            self.bias_hh,
        )
        if not unbatched:
            return out
        return out.squeeze(0) if n_states == 1 else tuple(h.squeeze(0) for h in out)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)`` (or
    relu).

    Shape:
        input ``(B, input_size)`` or ``(input_size)``; hx ``(B, hidden_size)``; returns h'.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        cells = {"tanh": F_rnn.rnn_tanh_cell, "relu": F_rnn.rnn_relu_cell}
        if self.nonlinearity not in cells:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step(
            "RNNCell", cells[self.nonlinearity], input, None if hx is None else (hx,), 1
        )


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c')`` from input and ``(h, c)``.

    Shape:
        input ``(B, input_size)`` or ``(input_size)``; h and c ``(B, hidden_size)``.

    Example:
        >>> h, c = nn.LSTMCell(10, 20)(tocha.randn(3, 10))
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        if isinstance(hx, Tensor):
            raise TypeError(
                "lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not Tensor"
            )
        if hx is not None and input.dim() == 2 and len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        return self._step("LSTMCell", F_rnn.lstm_cell, input, hx, 2)


class GRUCell(RNNCellBase):
    """One GRU step: h' from input and h.

    Shape:
        input ``(B, input_size)`` or ``(input_size)``; hx ``(B, hidden_size)``.
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("GRUCell", F_rnn.gru_cell, input, None if hx is None else (hx,), 1)
