"""``CheckpointException``: how DCP's `save` and `load` fail, as
``torch.distributed.checkpoint.api``."""

from __future__ import annotations

import traceback

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """The errors of the ranks that failed, ``failures``: {rank: exception}.

    Like PyTorch's, it derives from BaseException (not Exception): every rank raises it when
    any rank failed, so that the ranks stop together.
    """

    def __init__(self, msg: str, failures: dict[int, BaseException]) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict[int, BaseException]:
        """The exception of each rank that failed."""
        return self._failures

    def __str__(self) -> str:
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, exc in self._failures.items():
            trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            text += trace.replace(
                "Traceback (most recent call last):",
                f"Traceback (most recent call last): (RANK {rank})",
                1,
            )
        return text
