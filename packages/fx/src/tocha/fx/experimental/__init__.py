"""tocha.fx.experimental: tracing at the level of tocha's primitives (`proxy_tensor.make_fx`)."""
