"""`GradScaler`: loss scaling for mixed-precision training, as `torch.amp.GradScaler`.

The loss is multiplied by a scale before backward so that small float16 gradients do not
flush to zero; `unscale_` divides the gradients back and notes whether any is inf or NaN;
`step` skips the optimizer step when one is; `update` halves the scale after an overflow and
doubles it after ``growth_interval`` clean steps.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import _dtype

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Dynamic loss scaling, as `torch.amp.GradScaler`.

    Args:
        device: the device type of the gradients (``"cuda"`` or ``"cpu"``).
        init_scale: the scale to start from.
        growth_factor: the scale's factor after `growth_interval` steps without inf/NaN.
        backoff_factor: the scale's factor after a step with inf/NaN gradients.
        growth_interval: clean steps between two growths.
        enabled: False makes every method a pass-through (`scale` returns its input).

    Example::

        scaler = tocha.amp.GradScaler("cuda")
        with tocha.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ):
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn(
                    "tocha.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        self._init_scale = float(init_scale)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker = 0
        self._per_optimizer: dict = {}

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": 0})

    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor or nested lists/tuples of tensors) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer) -> None:
        """Divide the gradients of `optimizer`'s parameters by the scale, in place, and note
        whether any of them holds inf or NaN. At most once per optimizer between updates."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale
        found = 0
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is _dtype.float16 and self._device != "cuda":
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g.mul_(inv_scale)
                if not bool(g.isfinite().all()):
                    found = 1
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """`optimizer.step()` unless the unscaled gradients hold inf or NaN; returns what
        the step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Adjust the scale after this iteration's steps (or set it to `new_scale`)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = self._scale * self._growth_factor
                    if math.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """The scale and its settings, under PyTorch's keys (empty when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what `state_dict` gave."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
