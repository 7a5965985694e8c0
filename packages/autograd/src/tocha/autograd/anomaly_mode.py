"""Anomaly detection: NaN gradients raise, naming the backward node; an error in a node's
backward warns with the traceback of the forward call that recorded it."""

from __future__ import annotations

import functools
import os
import threading
import traceback
import warnings

import tocha
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
    """The traceback of the forward call that is recording a node (kept in anomaly mode), up
    to the call into tocha."""
    stack = traceback.extract_stack()
    inside = tuple(os.path.join(p, "") for p in tocha.__path__)
    while stack and stack[-1].filename.startswith(inside):
        stack.pop()
    return "".join(traceback.format_list(stack))


def check_nan(node, grads) -> None:
    """Raise if a node produced NaN in one of its gradients."""
    if not ANOMALY.check_nan:
        return
    for i, grad in enumerate(grads):
        if grad is not None and grad.is_floating_point() and bool(grad.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def warn_failed(node) -> None:
    """In anomaly mode, a node whose backward raised: warn with where its forward ran."""
    if ANOMALY.enabled and getattr(node, "trace", None):
        warnings.warn(
            f"Error detected in {node.name()}. Traceback of forward call that caused the "
            f"error:\n{node.trace}",
            UserWarning,
            stacklevel=4,
        )


class detect_anomaly:
    """Context manager (and decorator) that checks every backward node for NaN results and
    records where each node's forward op was called."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self):
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        _switch(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _switch(*self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once, and (as a context manager) back to what it
    was on exit."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        _switch(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _switch(*self._prev)
        return False


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
