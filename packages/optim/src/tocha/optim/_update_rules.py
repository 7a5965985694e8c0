"""The maths of the elementwise optimizers, on backend arrays, in place.

Each function updates one parameter array `p` and its state arrays in place from the
gradient `g` (read only), with the coefficients of this step as keyword arguments. `xp` is
the arrays' namespace (NumPy or CuPy) and `tmp` three scratch arrays shaped like `p`. The
same function serves one parameter (the single-tensor path) and a flat block of a whole
group's parameters (the multi-tensor path): the update of each element depends only on the
same element of the other arrays. The order of operations follows PyTorch's single-tensor
implementations, so both give the same values up to rounding.
"""

from __future__ import annotations

__all__ = [
    "sgd",
    "adam",
    "adamax",
    "nadam",
    "radam",
    "rmsprop",
    "adagrad",
    "adadelta",
    "asgd",
    "rprop",
]


def _grad(xp, p, g, weight_decay, maximize, out):
    """The gradient the update follows: ``-g`` when maximizing, plus ``weight_decay * p``
    (L2 penalty); `g` itself when neither applies."""
    if weight_decay != 0:
        xp.multiply(p, weight_decay, out=out)
        if maximize:
            xp.subtract(out, g, out=out)
        else:
            xp.add(out, g, out=out)
        return out
    if maximize:
        return xp.negative(g, out=out)
    return g


def _lerp(xp, a, b, weight, tmp):
    """``a.lerp_(b, weight)`` with PyTorch's formula (exact at both ends)."""
    xp.subtract(b, a, out=tmp)
    if abs(weight) < 0.5:
        tmp *= weight
        a += tmp
    else:
        tmp *= 1 - weight
        xp.subtract(b, tmp, out=a)


def _ema_sq(xp, avg, d, beta, tmp):
    """``avg.mul_(beta).addcmul_(d, d, value=1 - beta)``."""
    avg *= beta
    xp.multiply(d, 1 - beta, out=tmp)
    tmp *= d
    avg += tmp


def sgd(
    xp,
    p,
    g,
    momentum_buffer,
    tmp,
    *,
    lr,
    momentum,
    dampening,
    weight_decay,
    nesterov,
    maximize,
    fresh,
):
    """SGD with momentum (a fresh buffer starts as the gradient), dampening and Nesterov."""
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    update = d
    if momentum != 0:
        buf = momentum_buffer
        if fresh:
            xp.copyto(buf, d)
        else:
            buf *= momentum
            xp.multiply(d, 1 - dampening, out=tmp[1])
            buf += tmp[1]
        update = buf
        if nesterov:
            update = xp.multiply(buf, momentum, out=tmp[1])
            update += d
    xp.multiply(update, lr, out=tmp[1])
    p -= tmp[1]


def adam(
    xp,
    p,
    g,
    exp_avg,
    exp_avg_sq,
    max_exp_avg_sq,
    tmp,
    *,
    step,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    amsgrad,
    maximize,
    decoupled_weight_decay,
):
    """Adam (and AdamW with ``decoupled_weight_decay``), optionally AMSGrad."""
    if weight_decay != 0 and decoupled_weight_decay:
        p *= 1 - lr * weight_decay
        weight_decay = 0
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    _lerp(xp, exp_avg, d, 1 - beta1, tmp[1])
    _ema_sq(xp, exp_avg_sq, d, beta2, tmp[1])
    step_size = lr / (1 - beta1**step)
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    second = exp_avg_sq
    if amsgrad:
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        second = max_exp_avg_sq
    denom = xp.sqrt(second, out=tmp[1])
    denom /= bias_correction2_sqrt
    denom += eps
    xp.divide(exp_avg, denom, out=denom)
    denom *= step_size
    p -= denom


def adamax(xp, p, g, exp_avg, exp_inf, tmp, *, step, lr, beta1, beta2, eps, weight_decay, maximize):
    """Adamax: Adam with the infinity norm."""
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    _lerp(xp, exp_avg, d, 1 - beta1, tmp[1])
    exp_inf *= beta2
    norm = xp.abs(d, out=tmp[1])
    norm += eps
    xp.maximum(exp_inf, norm, out=exp_inf)
    clr = lr / (1 - beta1**step)
    xp.divide(exp_avg, exp_inf, out=tmp[1])
    tmp[1] *= clr
    p -= tmp[1]


def nadam(
    xp,
    p,
    g,
    exp_avg,
    exp_avg_sq,
    tmp,
    *,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    decoupled_weight_decay,
    maximize,
    bias_correction2,
    mu,
    mu_next,
    mu_product,
):
    """NAdam: Adam with Nesterov momentum; `mu_product` is the product of the momentum
    coefficients up to this step."""
    if weight_decay != 0 and decoupled_weight_decay:
        p *= 1 - lr * weight_decay
        weight_decay = 0
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    _lerp(xp, exp_avg, d, 1 - beta1, tmp[1])
    _ema_sq(xp, exp_avg_sq, d, beta2, tmp[1])
    denom = xp.divide(exp_avg_sq, bias_correction2, out=tmp[1])
    xp.sqrt(denom, out=denom)
    denom += eps
    mu_product_next = mu_product * mu_next
    xp.divide(d, denom, out=tmp[2])
    tmp[2] *= -lr * (1.0 - mu) / (1.0 - mu_product)
    p += tmp[2]
    xp.divide(exp_avg, denom, out=tmp[2])
    tmp[2] *= (-lr * mu_next) / (1.0 - mu_product_next)
    p += tmp[2]


def radam(
    xp,
    p,
    g,
    exp_avg,
    exp_avg_sq,
    tmp,
    *,
    step,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    decoupled_weight_decay,
    maximize,
):
    """RAdam: Adam with a rectified adaptive learning rate."""
    if weight_decay != 0 and decoupled_weight_decay:
        p *= 1 - lr * weight_decay
        weight_decay = 0
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    _lerp(xp, exp_avg, d, 1 - beta1, tmp[1])
    _ema_sq(xp, exp_avg_sq, d, beta2, tmp[1])
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    update = xp.divide(exp_avg, bias_correction1, out=tmp[1])
    update *= lr
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    if rho_t > 5.0:
        adaptive = xp.sqrt(exp_avg_sq, out=tmp[2])
        adaptive += eps
        xp.divide(bias_correction2**0.5, adaptive, out=adaptive)
        update *= adaptive
        update *= (
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        ) ** 0.5
    p -= update


def rmsprop(
    xp,
    p,
    g,
    square_avg,
    momentum_buffer,
    grad_avg,
    tmp,
    *,
    lr,
    alpha,
    eps,
    weight_decay,
    momentum,
    centered,
    maximize,
):
    """RMSprop, optionally centered and with momentum."""
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    _ema_sq(xp, square_avg, d, alpha, tmp[1])
    avg = tmp[1]
    if centered:
        _lerp(xp, grad_avg, d, 1 - alpha, avg)
        xp.multiply(grad_avg, grad_avg, out=avg)
        xp.subtract(square_avg, avg, out=avg)
        xp.sqrt(avg, out=avg)
    else:
        xp.sqrt(square_avg, out=avg)
    avg += eps
    if momentum > 0:
        momentum_buffer *= momentum
        xp.divide(d, avg, out=avg)
        momentum_buffer += avg
        xp.multiply(momentum_buffer, lr, out=avg)
    else:
        xp.divide(d, avg, out=avg)
        avg *= lr
    p -= avg


def adagrad(xp, p, g, state_sum, tmp, *, step, lr, lr_decay, eps, weight_decay, maximize):
    """Adagrad with learning-rate decay."""
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    clr = lr / (1 + (step - 1) * lr_decay)
    xp.multiply(d, d, out=tmp[1])
    state_sum += tmp[1]
    std = xp.sqrt(state_sum, out=tmp[1])
    std += eps
    xp.divide(d, std, out=std)
    std *= clr
    p -= std


def adadelta(xp, p, g, square_avg, acc_delta, tmp, *, lr, rho, eps, weight_decay, maximize):
    """Adadelta."""
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    _ema_sq(xp, square_avg, d, rho, tmp[1])
    std = xp.add(square_avg, eps, out=tmp[1])
    xp.sqrt(std, out=std)
    delta = xp.add(acc_delta, eps, out=tmp[2])
    xp.sqrt(delta, out=delta)
    delta /= std
    delta *= d
    _ema_sq(xp, acc_delta, delta, rho, std)
    delta *= lr
    p -= delta


def asgd(xp, p, g, ax, tmp, *, lambd, eta, mu, weight_decay, maximize):
    """Averaged SGD: the step with rate `eta`, then the running average `ax` of the
    parameter with weight `mu`."""
    d = _grad(xp, p, g, weight_decay, maximize, tmp[0])
    p *= 1 - lambd * eta
    xp.multiply(d, eta, out=tmp[1])
    p -= tmp[1]
    if mu != 1:
        xp.subtract(p, ax, out=tmp[1])
        tmp[1] *= mu
        ax += tmp[1]
    else:
        xp.copyto(ax, p)


def rprop(
    xp, p, g, prev, step_size, tmp, *, etaminus, etaplus, step_size_min, step_size_max, maximize
):
    """Rprop: per-element step sizes grown or shrunk by the sign of successive gradients."""
    d = tmp[0]
    if maximize:
        xp.negative(g, out=d)
    else:
        xp.copyto(d, g)
    sign = xp.multiply(d, prev, out=tmp[1])
    xp.sign(sign, out=sign)
    xp.copyto(sign, etaplus, where=sign > 0)
    xp.copyto(sign, etaminus, where=sign < 0)
    xp.copyto(sign, 1, where=sign == 0)
    step_size *= sign
    xp.clip(step_size, step_size_min, step_size_max, out=step_size)
    xp.copyto(d, 0, where=sign == etaminus)
    xp.sign(d, out=tmp[2])
    tmp[2] *= step_size
    p -= tmp[2]
    xp.copyto(prev, d)
