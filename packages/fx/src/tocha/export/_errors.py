"""The errors export raises, of the kinds PyTorch raises."""

__all__ = ["ConstraintViolationError", "GuardOnDataDependentSymNode", "UserError"]

_FOOTER = (
    "\n\nThe error above occurred when calling torch.export.export. If you would like to view "
    "some more information about this error, and get a list of all other errors that may "
    "occur in your export call, you can replace your `export()` call with `draft_export()`."
)


class UserError(RuntimeError):
    """A mistake in what export was asked (a bad ``dynamic_shapes``, a dimension marked
    dynamic that the code specialises)."""


class ConstraintViolationError(RuntimeError):
    """An example input outside the range its dynamic dimension allows."""


class GuardOnDataDependentSymNode(RuntimeError):
    """Python control flow that depends on the values of a traced tensor."""


def with_footer(message: str) -> str:
    return message + _FOOTER
