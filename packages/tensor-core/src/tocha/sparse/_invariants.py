"""``tocha.sparse.check_sparse_tensor_invariants``: PyTorch's switch for checking the
invariants of the sparse tensors that constructors build."""

from __future__ import annotations

import functools


class _State:
    enabled = False


STATE = _State()


class check_sparse_tensor_invariants:  # noqa: N801 - PyTorch's name
    """Whether sparse tensor constructors check their indices by default (when
    ``check_invariants`` is not given), as ``torch.sparse.check_sparse_tensor_invariants``:
    a context manager (``with check_sparse_tensor_invariants():``), a decorator, or the
    switch itself (`enable`, `disable`, `is_enabled`). tocha's compressed constructors
    always check."""

    @staticmethod
    def is_enabled() -> bool:
        """Whether the checks are on by default."""
        return STATE.enabled

    @staticmethod
    def enable() -> None:
        """Turn the checks on by default."""
        STATE.enabled = True

    @staticmethod
    def disable() -> None:
        """Turn the default checks off."""
        STATE.enabled = False

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved = None

    def __enter__(self) -> None:
        if self.saved is not None:
            raise RuntimeError(
                "This context manager instance is already activated. Use a different context "
                "manager instance for context nesting."
            )
        self.saved = STATE.enabled
        STATE.enabled = self.state

    def __exit__(self, *exc) -> None:
        STATE.enabled = self.saved
        self.saved = None

    def __call__(self, fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)

        return checked
