"""The layer classes, one module per family (as torch.nn.modules.<family>)."""

from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .module import Module

__all__ = [name for name in dir() if name[0].isupper()]
