"""tocha.utils: ``tocha.utils.data`` (datasets, samplers, `DataLoader`, as
``torch.utils.data``), ``tocha.utils.checkpoint`` (activation checkpointing),
``tocha.utils.dlpack`` (`to_dlpack`, `from_dlpack`), ``tocha.utils.hooks``
(`RemovableHandle`), ``tocha.utils.model_zoo`` (`load_url`, which is
`tocha.hub.load_state_dict_from_url`), ``tocha.utils.tensorboard`` (`SummaryWriter`) and
``tocha.utils.trainer`` (fit / evaluate / predict with checkpoints, early stopping and a
metrics history) and ``tocha.utils.benchmark`` (`Timer`, `Measurement`, `Compare`). Each is
imported on first access."""

import importlib
from typing import TYPE_CHECKING

from ._version import __version__

__all__ = [
    "benchmark",
    "checkpoint",
    "data",
    "dlpack",
    "hooks",
    "model_zoo",
    "tensorboard",
    "trainer",
]

if TYPE_CHECKING:
    # Type checkers see the submodules, and no __getattr__: they report the names tocha lacks.
    from . import benchmark, checkpoint, data, dlpack, hooks, model_zoo, tensorboard, trainer
else:

    def __getattr__(name):
        if name in __all__:
            module = importlib.import_module(f"{__name__}.{name}")
            globals()[name] = module
            return module
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
