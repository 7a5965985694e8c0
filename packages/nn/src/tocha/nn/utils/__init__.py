"""tocha.nn.utils: gradient clipping, parameter vectors, parametrizations, layer fusion and
functional calls, as ``torch.nn.utils``."""

from . import parametrizations, parametrize, rnn, stateless  # noqa: F401
from .clip_grad import (  # noqa: F401
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import (  # noqa: F401
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
