"""tocha.func: composable function transforms, as ``torch.func``.

- `vmap`: a function mapped over a batch dimension of its inputs, by batching rules.
- `grad`, `grad_and_value`, `vjp`: reverse mode; `jvp`, `linearize`: forward mode.
- `jacrev`, `jacfwd`, `hessian`: whole Jacobians and Hessians, as `vmap` over the above.
- `functional_call`, `stack_module_state`: modules as functions of their tensors (model
  ensembles, per-sample gradients).

Each takes and returns tensors or pytrees (tuples, lists, dicts) of tensors, and they nest:
``vmap(grad(loss), in_dims=(None, 0, 0))`` gives per-sample gradients.
"""

from typing import TYPE_CHECKING

from . import _custom_function  # noqa: F401  (custom Functions under vmap)
from ._functionalize import functionalize
from ._grad import grad, grad_and_value
from ._jacobian import hessian, jacfwd, jacrev
from ._jvp import jvp, linearize
from ._modules import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._rearrange import rearrange
from ._version import __version__
from ._vjp import vjp
from ._vmap import debug_unwrap, vmap

__all__ = [
    "vmap",
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
    "functional_call",
    "stack_module_state",
    "functionalize",
    "replace_all_batch_norm_modules_",
    "debug_unwrap",
    "rearrange",
    "__version__",
]


# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
