"""Gamma variates with implicit reparameterization gradients, and the regularized
incomplete gamma function they need.

A standard Gamma(alpha) sample x is drawn by Marsaglia and Tsang's rejection method. Its
gradient with respect to alpha is implicit (Figurnov et al., 2018): holding the CDF value
u = P(alpha, x) fixed, dx/dalpha = -(dP/dalpha) / p(x; alpha), where P is the regularized
lower incomplete gamma function and p the density. P and dP/dalpha are computed together,
the derivative carried term by term (forward mode, by hand), through P's power series
(x < alpha + 1) or the continued fraction of 1 - P (otherwise), until the terms stop
changing the result; above a concentration of `_LARGE` the Wilson-Hilferty normal
approximation of the CDF and its derivative stand in. Everything runs in float64, without
building an autograd graph; `gammainc` wraps it as a differentiable function."""

from __future__ import annotations

import math

import tocha

_TINY = 1e-300
_EPS = 1e-15  # a few units in the last place of float64
_CHECK_EVERY = 16
_MAX_ITERATIONS = 4000
_LARGE = 1e4  # above this concentration, the Wilson-Hilferty approximation


def _series(a: tocha.Tensor, x: tocha.Tensor) -> tuple[tocha.Tensor, tocha.Tensor]:
    """P(a, x) and dP/da by the power series, for 0 < x < a + 1."""
    term = tocha.ones_like(x)
    d_term = tocha.zeros_like(x)
    total = tocha.ones_like(x)
    d_total = tocha.zeros_like(x)
    for n in range(1, _MAX_ITERATIONS + 1):
        ratio = x / (a + n)
        d_term = ratio * (d_term - term / (a + n))
        term = term * ratio
        total = total + term
        d_total = d_total + d_term
        if n % _CHECK_EVERY == 0 and bool((term <= total * _EPS).all()):
            break
    prefactor = tocha.exp(a * tocha.log(x) - x - tocha.lgamma(a + 1))
    d_log_prefactor = tocha.log(x) - tocha.digamma(a + 1)
    return prefactor * total, prefactor * (d_log_prefactor * total + d_total)


def _continued_fraction(a: tocha.Tensor, x: tocha.Tensor) -> tuple[tocha.Tensor, tocha.Tensor]:
    """Q(a, x) = 1 - P(a, x) and dQ/da by the continued fraction (modified Lentz), for
    x >= a + 1."""
    b = x + 1 - a
    db = -tocha.ones_like(x)
    c = tocha.full_like(x, 1 / _TINY)
    dc = tocha.zeros_like(x)
    d = 1 / b
    dd = -db / (b * b)
    h, dh = d, dd
    for i in range(1, _MAX_ITERATIONS + 1):
        an = -i * (i - a)
        b = b + 2
        d_new = an * d + b
        dd = i * d + an * dd + db
        guard = d_new.abs() < _TINY
        d_new = tocha.where(guard, tocha.full_like(d_new, _TINY), d_new)
        dd = tocha.where(guard, tocha.zeros_like(dd), dd)
        c_new = b + an / c
        dc = db + i / c - an * dc / (c * c)
        guard = c_new.abs() < _TINY
        c = tocha.where(guard, tocha.full_like(c_new, _TINY), c_new)
        dc = tocha.where(guard, tocha.zeros_like(dc), dc)
        d = 1 / d_new
        dd = -dd * d * d
        delta = d * c
        d_delta = dd * c + d * dc
        dh = dh * delta + h * d_delta
        h = h * delta
        if i % _CHECK_EVERY == 0 and bool(((delta - 1).abs() < _EPS).all()):
            break
    prefactor = tocha.exp(a * tocha.log(x) - x - tocha.lgamma(a))
    d_log_prefactor = tocha.log(x) - tocha.digamma(a)
    return prefactor * h, prefactor * (d_log_prefactor * h + dh)


def _wilson_hilferty(a: tocha.Tensor, x: tocha.Tensor) -> tuple[tocha.Tensor, tocha.Tensor]:
    """P(a, x) and dP/da by the Wilson-Hilferty normal approximation of (x / a) ** (1/3)."""
    s = 1 / (9 * a)
    root_s = s.sqrt()
    q = (x / a) ** (1 / 3)
    numerator = q - 1 + s
    z = numerator / root_s
    dz = (-q / (3 * a) - s / a) / root_s + numerator / (2 * a * root_s)
    density = tocha.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    return 0.5 * tocha.erfc(-z / math.sqrt(2)), density * dz


def regularized_gamma(a: tocha.Tensor, x: tocha.Tensor) -> tuple[tocha.Tensor, tocha.Tensor]:
    """The regularized lower incomplete gamma function P(a, x) and its derivative in a,
    for broadcast float64 tensors (a > 0, x >= 0); no autograd graph is built."""
    with tocha.no_grad():
        a, x = tocha.broadcast_tensors(a.detach(), x.detach())
        zero = x <= 0
        large = a > _LARGE
        use_series = (x < a + 1) & ~zero & ~large
        use_fraction = (x >= a + 1) & ~large
        ones = tocha.ones_like(x)
        value = tocha.zeros_like(x)
        grad = tocha.zeros_like(x)
        if bool(use_series.any()):
            v, g = _series(tocha.where(use_series, a, ones), tocha.where(use_series, x, ones))
            value = tocha.where(use_series, v, value)
            grad = tocha.where(use_series, g, grad)
        if bool(use_fraction.any()):
            v, g = _continued_fraction(
                tocha.where(use_fraction, a, ones), tocha.where(use_fraction, x, a + 1)
            )
            value = tocha.where(use_fraction, 1 - v, value)
            grad = tocha.where(use_fraction, -g, grad)
        if bool(large.any()):
            al = tocha.where(large, a, ones)
            v, g = _wilson_hilferty(al, tocha.where(large & ~zero, x, al))
            value = tocha.where(large & ~zero, v, value)
            grad = tocha.where(large & ~zero, g, grad)
    return value, grad


def _log_density(a: tocha.Tensor, x: tocha.Tensor) -> tocha.Tensor:
    return (a - 1) * tocha.log(x) - x - tocha.lgamma(a)


def gamma_sample_grad(a: tocha.Tensor, x: tocha.Tensor) -> tocha.Tensor:
    """dx/da of standard Gamma(a) samples x, holding their CDF value fixed."""
    a64 = a.detach().to(tocha.float64)
    x64 = x.detach().to(tocha.float64)
    _, d_cdf = regularized_gamma(a64, x64)
    return (-d_cdf * tocha.exp(-_log_density(a64, x64))).to(x.dtype)


class _RegularizedGamma(tocha.autograd.Function):
    """P(a, x) with its derivatives: the density in x, the numerical dP/da in a."""

    @staticmethod
    def forward(ctx, a, x):
        a64, x64 = a.detach().to(tocha.float64), x.detach().to(tocha.float64)
        value, d_a = regularized_gamma(a64, x64)
        density = tocha.exp(_log_density(a64, x64.clamp(min=_TINY)))
        density = tocha.where(x64 > 0, density, tocha.zeros_like(density))
        ctx.save_for_backward(a, x, d_a.to(a.dtype), density.to(x.dtype))
        return value.to(tocha.promote_types(a.dtype, x.dtype))

    @staticmethod
    @tocha.autograd.function.once_differentiable
    def backward(ctx, grad):
        a, x, d_a, density = ctx.saved_tensors
        return _reduce_to(grad * d_a, a), _reduce_to(grad * density, x)


def _reduce_to(grad, like):
    """`grad` summed down to the shape of `like` (undoing broadcasting)."""
    if grad is None or grad.shape == like.shape:
        return grad
    extra = grad.dim() - like.dim()
    grad = grad.sum(tuple(range(extra))) if extra else grad
    dims = tuple(i for i, n in enumerate(like.shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(dims, keepdim=True) if dims else grad


def gammainc(a: tocha.Tensor, x: tocha.Tensor) -> tocha.Tensor:
    """The regularized lower incomplete gamma function, differentiable in both arguments."""
    return _RegularizedGamma.apply(a, x)


def _marsaglia_tsang(alpha: tocha.Tensor) -> tocha.Tensor:
    """Standard Gamma(alpha) variates for alpha >= 1, by rejection (no gradient)."""
    d = alpha - 1 / 3
    c = 1 / (9 * d).sqrt()
    result = tocha.zeros_like(alpha)
    pending = tocha.ones_like(alpha, dtype=tocha.bool)
    while bool(pending.any()):
        z = tocha.randn(tuple(alpha.shape), dtype=alpha.dtype, device=alpha.device)
        u = tocha.rand(tuple(alpha.shape), dtype=alpha.dtype, device=alpha.device)
        v = (1 + c * z) ** 3
        safe_v = tocha.where(v > 0, v, tocha.ones_like(v))
        accept = (v > 0) & (tocha.log(u) < 0.5 * z * z + d - d * safe_v + d * tocha.log(safe_v))
        take = accept & pending
        result = tocha.where(take, d * safe_v, result)
        pending = pending & ~take
    return result


def sample_standard_gamma(alpha: tocha.Tensor) -> tocha.Tensor:
    """Standard Gamma(alpha) variates of alpha's shape, from tocha's global generator,
    clamped to the dtype's smallest normal number (no gradient)."""
    with tocha.no_grad():
        alpha64 = alpha.detach().to(tocha.float64)
        small = alpha64 < 1
        boosted = tocha.where(small, alpha64 + 1, alpha64)
        x = _marsaglia_tsang(boosted)
        u = tocha.rand(tuple(alpha.shape), dtype=tocha.float64, device=alpha.device)
        safe_alpha = tocha.where(small, alpha64, tocha.ones_like(alpha64))
        x = tocha.where(small, x * u ** (1 / safe_alpha), x)
        return x.to(alpha.dtype).clamp(min=tocha.finfo(alpha.dtype).tiny)


class _StandardGamma(tocha.autograd.Function):
    """A standard Gamma sample whose gradient in alpha is implicit."""

    @staticmethod
    def forward(ctx, alpha):
        x = sample_standard_gamma(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    @tocha.autograd.function.once_differentiable
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * gamma_sample_grad(alpha, x)


def standard_gamma(alpha: tocha.Tensor) -> tocha.Tensor:
    """Standard Gamma(alpha) variates (rate 1) of alpha's shape; differentiable in alpha
    by implicit reparameterization when alpha requires grad."""
    if alpha.requires_grad and tocha.is_grad_enabled():
        return _StandardGamma.apply(alpha)
    return sample_standard_gamma(alpha)
