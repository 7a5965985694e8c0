"""``torch`` in the processes that a program run by ``tocha.run`` starts with the "spawn"
(or "forkserver") method: they import the program's main module afresh, with the parent's
``sys.path``, where ``tocha.run`` put this folder. The first ``import torch`` there aliases
torch to tocha, as the runner did in the parent, and gives tocha's ``torch``."""

import sys

del sys.modules[__name__]

from tocha.compat import alias_torch  # noqa: E402

alias_torch()

import torch  # noqa: E402,F401  (tocha now, through the alias; it takes this module's place)
