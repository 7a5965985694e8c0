"""``tocha.utils.tensorboard``: `SummaryWriter`, as ``torch.utils.tensorboard``, writing
TensorBoard's event files itself (TFRecord framing and the Event/Summary messages, encoded
by hand): TensorBoard reads them; neither it nor protobuf is needed to write them."""

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
