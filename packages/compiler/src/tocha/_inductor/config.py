"""``torch._inductor.config``: settings with PyTorch's defaults, nested groups
(``triton``, ``cpp``, ``trace``, ``aot_inductor``...), ``patch`` and ``get_config_copy``.
Any name may be set; tocha's compiler reads none of them."""

from __future__ import annotations

import sys

from tocha.compiler._config import inductor_config

# The module object itself is the settings, as PyTorch's config modules are.
_settings = inductor_config()
for _key in ("__spec__", "__file__", "__loader__", "__package__", "__doc__"):
    setattr(_settings, _key, globals()[_key])
sys.modules[__name__] = _settings
