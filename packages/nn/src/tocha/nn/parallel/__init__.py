"""``tocha.nn.parallel``, as ``torch.nn.parallel``: `DataParallel` (tocha runs a module on one
device, so it runs the wrapped module there) and `DistributedDataParallel`, which comes from
tocha-distributed when that is installed.

Programs that wrap their model (``model = nn.DataParallel(model)``) or only import these run
unchanged; state dicts keep PyTorch's ``module.`` prefix.
"""

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def __getattr__(name):
    if name == "DistributedDataParallel":
        from .distributed import distributed_data_parallel

        cls = distributed_data_parallel()
        globals()[name] = cls
        return cls
    from tocha.library import missing_attribute

    raise missing_attribute(__name__, name)
