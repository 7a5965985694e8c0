"""tocha.nn.functional: the functional form of every layer, as ``torch.nn.functional``.

The implementations live in ``tocha.nn._functional.<family>``; this module re-exports them.
"""
