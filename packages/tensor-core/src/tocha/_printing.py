"""How tensors print: PyTorch's layout exactly (`tensor_repr`), and `set_printoptions`.

Printing reads the tensor's values on the host as NumPy and formats them as PyTorch's
``torch/_tensor_str.py`` does: one width for all elements, fixed or scientific notation
chosen from the magnitudes, summaries with ``...`` beyond `threshold` elements, lines
wrapped at `linewidth`, and suffixes for the dtype, device and autograd state.
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtype
from ._api import export


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, as `torch.set_printoptions`.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: element count beyond which a tensor prints summarised (default 1000).
        edgeitems: items shown at each end of a summarised dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``, applied before the other options
            (any other name is ignored, as by PyTorch).
        sci_mode: force (True) or forbid (False) scientific notation; None chooses.
    """
    if profile in _PROFILES:  # as PyTorch, another profile name changes nothing
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth) = (
            _PROFILES[profile]
        )
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as a dict of `set_printoptions`' arguments."""
    return {name: getattr(PRINT_OPTS, name) for name in _PrintOptions.__slots__}


export(set_printoptions)
export(get_printoptions)


class _Formatter:
    """One width and notation for every element of a (real) array, as PyTorch chooses them."""

    __slots__ = ("floating", "int_mode", "sci_mode", "max_width")

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        magnitude = np.abs(finite).astype(np.float64)
        low, high = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = (
            high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
            if PRINT_OPTS.sci_mode is None
            else PRINT_OPTS.sci_mode
        )
        p = PRINT_OPTS.precision
        items = finite.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in items)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in items)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in items)

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = str(value)
        return " " * (self.max_width - len(text)) + text


def _summarized(data: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (edge items of every dimension)."""
    e = PRINT_OPTS.edgeitems
    if data.ndim == 0:
        return data
    if data.ndim == 1:
        if data.shape[0] > 2 * e:
            return np.concatenate((data[:e], data[-e:]))
        return data
    if not e:
        return data[(slice(0, 0),) * data.ndim]
    if data.shape[0] > 2 * e:
        rows = [*range(e), *range(data.shape[0] - e, data.shape[0])]
    else:
        rows = range(data.shape[0])
    return np.stack([_summarized(data[i]) for i in rows])


def _element(value, real_fmt: _Formatter, imag_fmt: _Formatter | None) -> str:
    if imag_fmt is None:
        return real_fmt.format(value)
    real = real_fmt.format(value.real)
    imag = (imag_fmt.format(value.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector(data, indent, summarize, real_fmt, imag_fmt) -> str:
    width = real_fmt.max_width + 2
    if imag_fmt is not None:
        width += imag_fmt.max_width + 1
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / width)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * e:
        items = (
            [_element(v, real_fmt, imag_fmt) for v in data[:e].tolist()]
            + [" ..."]
            + [_element(v, real_fmt, imag_fmt) for v in data[-e:].tolist()]
        )
    else:
        items = [_element(v, real_fmt, imag_fmt) for v in data.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(data, indent, summarize, real_fmt, imag_fmt) -> str:
    if data.ndim == 0:
        return _element(data.item(), real_fmt, imag_fmt)
    if data.ndim == 1:
        return _vector(data, indent, summarize, real_fmt, imag_fmt)
    e = PRINT_OPTS.edgeitems
    n = data.shape[0]
    if summarize and n > 2 * e:
        slices = (
            [_nested(data[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(e)]
            + ["..."]
            + [_nested(data[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(n - e, n)]
        )
    else:
        slices = [_nested(data[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(n)]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _body(data: np.ndarray, indent: int) -> str:
    summarize = data.size > PRINT_OPTS.threshold
    if data.dtype.kind == "V" or data.dtype == np.float16:  # bfloat16 and float16
        data = data.astype(np.float32)
    shown = _summarized(data) if summarize else data
    if data.dtype.kind == "c":
        return _nested(data, indent, summarize, _Formatter(shown.real), _Formatter(shown.imag))
    return _nested(data, indent, summarize, _Formatter(shown), None)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    """``repr(t)``: PyTorch's layout, e.g. ``tensor([1., 2.], dtype=tocha.float64)``."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    d = t.dtype
    if t._device.type == "meta":
        suffixes.append(f"size={tuple(t.shape)}")
        if d is not _dtype.DEFAULTS.float:
            suffixes.append(f"dtype={d!r}")
        return _add_suffixes(prefix + "...", suffixes + _autograd_suffixes(t), indent)
    data = t._host()
    if data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if d is not _dtype.DEFAULTS.float:
            suffixes.append(f"dtype={d!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if d not in (_dtype.DEFAULTS.float, _dtype.DEFAULTS.complex, _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={d!r}")
        body = _body(data, indent)
    return _add_suffixes(prefix + body, suffixes + _autograd_suffixes(t), indent)


def _autograd_suffixes(t) -> list:
    grad_fn = t.grad_fn
    if grad_fn is not None:
        name = grad_fn.name() if hasattr(grad_fn, "name") else type(grad_fn).__name__
        return [f"grad_fn=<{name}>"]
    return ["requires_grad=True"] if t.requires_grad else []
