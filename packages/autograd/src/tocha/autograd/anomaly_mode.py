"""Anomaly detection: NaN gradients raise, naming the forward op and where it was made."""

from __future__ import annotations

import threading
import traceback

from tocha.library import check_bool

from ._graph import RECORD_EXTRAS


class _Anomaly(threading.local):
    enabled = False
    check_nan = True


ANOMALY = _Anomaly()


def _switch(enabled: bool, check_nan: bool) -> None:
    """Set this thread's anomaly mode, keeping the recorder's count of active extras."""
    RECORD_EXTRAS.active += bool(enabled) - ANOMALY.enabled
    ANOMALY.enabled, ANOMALY.check_nan = bool(enabled), check_nan


def creation_trace() -> str:
    """The traceback of the forward call that is recording a node (kept in anomaly mode)."""
    return "".join(traceback.format_stack()[:-3])


def check_nan(node, grads) -> None:
    """Raise if a node produced NaN in one of its gradients."""
    if not ANOMALY.check_nan:
        return
    for i, grad in enumerate(grads):
        if grad is not None and grad.is_floating_point() and bool(grad.isnan().any()):
            where = (
                f"\nTraceback of forward call that caused the error:\n{node.trace}"
                if node.trace
                else ""
            )
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output.{where}"
            )


class detect_anomaly:
    """Context manager (and decorator) that checks every backward node for NaN results and
    records where each node's forward op was called."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        _switch(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _switch(*self._prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


def set_detect_anomaly(mode: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off."""
    _switch(mode, check_nan)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on in this thread (``tocha.is_anomaly_enabled``)."""
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN (``tocha.is_anomaly_check_nan_enabled``;
    True unless turned off, even while detection itself is off)."""
    return ANOMALY.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off in this thread, without `set_detect_anomaly`'s
    warning (``tocha.set_anomaly_enabled``)."""
    check_bool("set_anomaly_enabled", enabled, "enabled", 1)
    check_bool("set_anomaly_enabled", check_nan, "check_nan", 2)
    _switch(enabled, check_nan)
