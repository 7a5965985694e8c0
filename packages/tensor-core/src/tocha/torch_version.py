"""``tocha.torch_version``, as ``torch.torch_version``: `TorchVersion`, a version string that
compares as a version, and `__version__`, the PyTorch version whose API tocha follows.

``tocha.__version__`` is tocha's own version; under the torch alias (`tocha.compat`,
``python -m tocha.run``) ``torch.__version__`` is this module's `__version__`, so that
library checks such as ``torch.__version__ >= "2.0"`` see the PyTorch API tocha provides.

Example:
    >>> from tocha.torch_version import TorchVersion
    >>> TorchVersion("2.13.0") >= "2.6"
    True
    >>> TorchVersion("2.13.0") > (2, 9)
    True
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["TorchVersion", "__version__"]

_VERSION = re.compile(
    r"""^\s*v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d*))?
    (?:-(?P<post_implicit>\d+)|[-_.]?(?P<post>post|rev|r)[-_.]?(?P<post_n>\d*))?
    (?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>\d*))?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)
_PRE_PHASE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_INF = float("inf")


def _sort_key(text: str) -> tuple:
    """PEP 440's order of the version `text`: ValueError when it is not a version."""
    match = _VERSION.match(text)
    if match is None:
        raise ValueError(f"Invalid version: {text!r}")
    release = [int(part) for part in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    has_post = match["post"] is not None or match["post_implicit"] is not None
    if match["pre"] is not None:
        pre = (_PRE_PHASE[match["pre"].lower()], int(match["pre_n"] or 0))
    elif match["dev"] is not None and not has_post:
        pre = (-1, 0)  # 1.0.dev0 comes before 1.0a0
    else:
        pre = (3, 0)
    post = int(match["post_n"] or match["post_implicit"] or 0) if has_post else -1
    dev = int(match["dev_n"] or 0) if match["dev"] is not None else _INF
    local = tuple(
        (1, int(part), "") if part.isdigit() else (0, 0, part.lower())
        for part in re.split(r"[-_.]", match["local"] or "")
        if part
    )
    return int(match["epoch"] or 0), tuple(release), pre, post, dev, local


class TorchVersion(str):
    """A version string (``"2.13.0"``) that compares with other versions as versions:
    strings, tuples or lists of numbers (``(2, 0)``), and version objects such as
    ``packaging.version.Version``. ``TorchVersion("2.13.0") == "2.13"`` is True; ``!=`` is
    str's, as in PyTorch. A string that is not a version raises ValueError when compared."""

    __hash__ = str.__hash__

    def _key_of(self, other: Any) -> tuple | None:
        if isinstance(other, (tuple, list)):
            other = ".".join(str(part) for part in other)
        elif not isinstance(other, str) and hasattr(other, "release"):
            other = str(other)
        if not isinstance(other, str):
            return None
        return _sort_key(other)

    def _compare(self, other: Any, test) -> Any:
        key = self._key_of(other)
        if key is None:
            return NotImplemented
        return test(_sort_key(self), key)

    def __eq__(self, other: Any) -> Any:
        return self._compare(other, lambda a, b: a == b)

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other: Any) -> Any:
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, lambda a, b: a >= b)


__version__ = TorchVersion("2.13.0")
