"""The compiler's process-wide settings (``tocha._dynamo.config``) and the switch that turns
compiled code off (``tocha.compiler.disable``)."""

from __future__ import annotations

import collections
import threading

from ._config import dynamo_config

__all__ = ["config", "counters", "disabled"]

# As ``torch._dynamo.config``: how many compiled entries a function keeps before it runs
# eagerly (``recompile_limit``, also named ``cache_size_limit``), whether tocha.compile does
# anything at all, whether a dim seen at a second size becomes dynamic, and PyTorch's other
# settings, kept for the programs that set them.
config = dynamo_config()


# As ``torch._dynamo.utils.counters``: ``frames`` (``total`` captures tried, ``ok``),
# ``stats`` (``unique_graphs`` compiled) and ``graph_break`` (each reason, counted).
counters: collections.defaultdict = collections.defaultdict(collections.Counter)


class _Switch(threading.local):
    off = 0  # how many `Disabled` blocks this thread is in


_LOCAL = _Switch()


def disabled() -> bool:
    """Whether compiled functions run their original code now."""
    return config.disable or _LOCAL.off > 0


# ``tocha.compiler.set_stance``: "default", "force_eager" (compiled functions run their
# original code), "eager_on_recompile" (a call that would compile again runs eagerly) or
# "fail_on_recompile" (such a call raises).
STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
stance = ["default"]


class Disabled:
    """Inside the block (or the decorated function), compiled functions run eagerly."""

    def __enter__(self) -> None:
        _LOCAL.off += 1

    def __exit__(self, *exc: object) -> None:
        _LOCAL.off -= 1

    def __call__(self, fn):
        """``disable(recursive=False)(fn)``, as PyTorch's decorator form: `fn` runs as in the
        block."""
        import functools

        @functools.wraps(fn)
        def run_eagerly(*args, **kwargs):
            with Disabled():
                return fn(*args, **kwargs)

        return run_eagerly
