"""``tocha.distributed.checkpoint``, as ``torch.distributed.checkpoint`` (DCP): `save` and
`load` a state dict (tensors, plain values, `Stateful` objects) into a folder, every rank
together, and the state dicts of models and optimizers (`state_dict`). Tensors are taken as
replicated (DistributedDataParallel's): rank 0 writes them, every rank reads them."""

from . import api, state_dict, stateful
from ._filesystem import FileSystemReader, FileSystemWriter, Metadata
from ._save_load import load, load_state_dict, save, save_state_dict
from .api import CheckpointException
from .stateful import Stateful

__all__ = [
    "CheckpointException",
    "FileSystemReader",
    "FileSystemWriter",
    "Metadata",
    "Stateful",
    "api",
    "load",
    "load_state_dict",
    "save",
    "save_state_dict",
    "state_dict",
    "stateful",
]
