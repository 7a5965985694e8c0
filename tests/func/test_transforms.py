"""tocha.func's transforms other than vmap alone: grad, grad_and_value, vjp, jvp, linearize,
jacrev, jacfwd, hessian. Values against closed forms and central differences, structure
(argnums, pytrees, has_aux), composition (nesting, inside vmap, with outer autograd), and
values and errors against torch.func."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.func as tf
import tocha.nn.functional as F
from tocha.autograd import forward_ad

RNG = np.random.default_rng(7)


def _t(*shape):
    return tocha.from_numpy(RNG.standard_normal(shape))


def _close(a, b, tol=1e-9):
    a = a.detach().numpy() if isinstance(a, tocha.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, tocha.Tensor) else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _numeric_jacobian(f, x: tocha.Tensor, eps=1e-6) -> np.ndarray:
    """Central differences of f (tensor -> tensor) at x: shape f(x).shape + x.shape."""
    base = x.detach().numpy()
    out_shape = tuple(f(x).shape)
    jac = np.zeros(out_shape + base.shape)
    for idx in np.ndindex(base.shape):
        step = np.zeros_like(base)
        step[idx] = eps
        up = f(tocha.from_numpy(base + step)).detach().numpy()
        down = f(tocha.from_numpy(base - step)).detach().numpy()
        jac[(...,) + idx] = (up - down) / (2 * eps)
    return jac


def cubic(x):
    return (x * x * x).sum()


def smooth(x):
    return (x.sin() * x.exp()).sum() + (x * x).tanh().sum()


# -- grad and grad_and_value ----------------------------------------------------------------
def test_grad_against_closed_form_and_differences():
    x = _t(5)
    _close(tf.grad(cubic)(x), 3 * x * x)
    _close(tf.grad(smooth)(x), _numeric_jacobian(smooth, x), tol=1e-6)


def test_grad_and_value():
    x = _t(4)
    g, value = tf.grad_and_value(cubic)(x)
    _close(g, 3 * x * x)
    _close(value, cubic(x))
    assert not g.requires_grad and not value.requires_grad


def test_argnums_int_negative_and_tuple():
    x, y = _t(3), _t(3)

    def f(a, b):
        return (a * b * b).sum()

    _close(tf.grad(f)(x, y), y * y)
    _close(tf.grad(f, argnums=1)(x, y), 2 * x * y)
    _close(tf.grad(f, argnums=-1)(x, y), 2 * x * y)
    ga, gb = tf.grad(f, argnums=(0, 1))(x, y)
    _close(ga, y * y)
    _close(gb, 2 * x * y)


def test_pytree_inputs_keep_their_structure():
    params = {"w": _t(3), "pair": (_t(2), [_t(1)])}

    def f(p):
        return (p["w"] ** 2).sum() + (p["pair"][0] * 3).sum() + p["pair"][1][0].sum() ** 2

    g = tf.grad(f)(params)
    assert set(g) == {"w", "pair"} and isinstance(g["pair"], tuple)
    assert isinstance(g["pair"][1], list)
    _close(g["w"], 2 * params["w"])
    _close(g["pair"][0], tocha.full((2,), 3.0, dtype=tocha.float64))
    _close(g["pair"][1][0], 2 * params["pair"][1][0])


def test_has_aux():
    x = _t(3)
    g, aux = tf.grad(lambda a: (cubic(a), {"sq": a * a}), has_aux=True)(x)
    _close(g, 3 * x * x)
    _close(aux["sq"], x * x)
    assert not aux["sq"].requires_grad
    g, (value, aux) = tf.grad_and_value(lambda a: (cubic(a), a.sum()), has_aux=True)(x)
    _close(value, cubic(x))
    _close(aux, x.sum())


def test_kwargs_are_passed_and_not_differentiated():
    x = _t(3)
    _close(tf.grad(lambda a, *, scale: (a * a * scale).sum())(x, scale=3.0), 6 * x)


def test_unused_input_and_constant_output_give_zeros():
    x, y = _t(3), _t(2)
    ga, gb = tf.grad(lambda a, b: (a * 2).sum(), argnums=(0, 1))(x, y)
    _close(gb, tocha.zeros(2, dtype=tocha.float64))
    _close(tf.grad(lambda a: tocha.ones((), dtype=tocha.float64))(x), tocha.zeros_like(x))
    _close(tf.grad(lambda a: a.sum().long())(x), tocha.zeros_like(x))


def test_nested_grad():
    x = _t(4)
    _close(tf.grad(lambda a: tf.grad(cubic)(a).sum())(x), 6 * x)
    scalar = tocha.tensor(1.5, dtype=tocha.float64)
    _close(tf.grad(tf.grad(tf.grad(lambda a: a**4)))(scalar), 24 * scalar)


def test_nested_grad_through_a_captured_outer_input():
    x, y = _t(3), _t(3)
    # d/dw of sum(d/dy sum(w y^2)) = d/dw sum(2 w y) = 2 y
    got = tf.grad(lambda w: tf.grad(lambda b: (w * b * b).sum())(y).sum())(x)
    _close(got, 2 * y)


def test_grad_inside_no_grad_still_differentiates():
    x = _t(3)
    with tocha.no_grad():
        g = tf.grad(cubic)(x)
    _close(g, 3 * x * x)
    assert not g.requires_grad


def test_grad_of_an_input_requiring_grad_stays_connected():
    x = _t(3).requires_grad_()
    g = tf.grad(cubic)(x)
    assert g.requires_grad
    g.sum().backward()
    _close(x.grad, 6 * x)


def test_grad_of_a_function_capturing_a_tensor_requiring_grad_stays_connected():
    x, w = _t(3), _t(3).requires_grad_()
    g = tf.grad(lambda a: (a * a * w).sum())(x)
    assert g.requires_grad
    g.sum().backward()
    _close(w.grad, 2 * x)


def test_per_sample_gradients_with_vmap():
    w, xs, ts = _t(4, 3), _t(6, 4), _t(6, 3)

    def loss(weight, x, t):
        return ((x @ weight).tanh() - t).pow(2).sum()

    got = tf.vmap(tf.grad(loss), in_dims=(None, 0, 0))(w, xs, ts)
    assert got.shape == (6, 4, 3)
    for i in range(6):
        _close(got[i], tf.grad(loss)(w, xs[i], ts[i]))


def test_grad_and_value_of_a_pytree_inside_vmap():
    params = {"w": _t(4, 2), "b": _t(2)}
    xs = _t(5, 4)

    def loss(p, x):
        return F.softplus(x @ p["w"] + p["b"]).sum()

    grads, values = tf.vmap(tf.grad_and_value(loss), in_dims=(None, 0))(params, xs)
    assert grads["w"].shape == (5, 4, 2) and values.shape == (5,)
    for i in range(5):
        g, v = tf.grad_and_value(loss)(params, xs[i])
        _close(grads["w"][i], g["w"])
        _close(grads["b"][i], g["b"])
        _close(values[i], v)


def test_vmap_of_grad_of_grad():
    xs = _t(5)
    _close(tf.vmap(tf.grad(tf.grad(lambda a: a.sin())))(xs), -xs.sin())


# -- vjp ------------------------------------------------------------------------------------
def test_vjp_of_several_primals_and_a_pytree_output():
    x, y = _t(3), _t(3)
    out, vjp_fn = tf.vjp(lambda a, b: {"p": a * b, "s": (a.exp(),)}, x, y)
    _close(out["p"], x * y)
    u, w = _t(3), _t(3)
    gx, gy = vjp_fn({"p": u, "s": (w,)})
    _close(gx, u * y + w * x.exp())
    _close(gy, u * x)
    again = vjp_fn({"p": u, "s": (w,)})
    _close(again[0], gx)


def test_vjp_has_aux_and_pytree_primal():
    x = {"a": _t(2), "b": _t(2)}
    out, vjp_fn, aux = tf.vjp(lambda d: (d["a"] * d["b"], d["a"].sum()), x, has_aux=True)
    _close(aux, x["a"].sum())
    (g,) = vjp_fn(tocha.ones(2, dtype=tocha.float64))
    _close(g["a"], x["b"])
    _close(g["b"], x["a"])


def test_vjp_fn_cotangents_checked():
    out, vjp_fn = tf.vjp(lambda a: a * 2, _t(3))
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        vjp_fn((tocha.ones(3, dtype=tocha.float64),))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        vjp_fn(tocha.ones(2, dtype=tocha.float64))


def test_vjp_fn_under_vmap_gives_rows_of_the_jacobian():
    x = _t(4)
    _, vjp_fn = tf.vjp(lambda a: a.sin() * a.sum(), x)
    rows = tf.vmap(vjp_fn)(tocha.eye(4, dtype=tocha.float64))[0]
    _close(rows, _numeric_jacobian(lambda a: a.sin() * a.sum(), x), tol=1e-6)


# -- jvp and linearize ----------------------------------------------------------------------
def test_jvp_against_differences():
    x, v = _t(4), _t(4)
    out, tangent = tf.jvp(lambda a: (a.sin() * a.exp()).cumsum(0), (x,), (v,))
    _close(out, (x.sin() * x.exp()).cumsum(0))
    numeric = _numeric_jacobian(lambda a: (a.sin() * a.exp()).cumsum(0), x) @ v.numpy()
    _close(tangent, numeric, tol=1e-6)


def test_jvp_pytrees_and_has_aux():
    primals = ({"a": _t(2)}, [_t(2)])
    tangents = ({"a": _t(2)}, [_t(2)])

    def f(d, lst):
        return (d["a"] * lst[0], {"s": d["a"].sum()}), lst[0] * 3

    (out, tangent, aux) = tf.jvp(f, primals, tangents, has_aux=True)
    a, b = primals[0]["a"], primals[1][0]
    ta, tb = tangents[0]["a"], tangents[1][0]
    _close(out[0], a * b)
    _close(tangent[0], ta * b + a * tb)
    _close(tangent[1]["s"], ta.sum())
    _close(aux, b * 3)


def test_jvp_of_an_independent_or_integer_output_is_zero():
    x = _t(3)
    _, tangent = tf.jvp(lambda a: tocha.ones(2, dtype=tocha.float64), (x,), (x,))
    _close(tangent, tocha.zeros(2, dtype=tocha.float64))
    _, tangent = tf.jvp(lambda a: (a * 4).long(), (x,), (x,))
    assert tangent.dtype == tocha.int64 and not tangent.any()
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        tf.jvp(lambda a: tocha.ones(2), (x,), (x,), strict=True)


def test_jvp_leaves_no_dual_level_behind_even_on_error():
    x = _t(3)
    with pytest.raises(ZeroDivisionError):
        tf.jvp(lambda a: 1 / 0, (x,), (x,))
    with forward_ad.dual_level():
        pass


def test_nested_forward_mode():
    """A jvp inside another (forward-mode AD has one dual level) runs by two reverse
    passes: jacfwd(jacfwd(f)) is the Hessian, jvp of jvp the second directional derivative,
    and nothing outside tracks the results."""
    x, v = _t(3), _t(3)
    inner = tf.jvp(lambda a: tf.jvp(tocha.sin, (a,), (v,))[1], (x,), (v,))
    _close(inner[0], x.cos() * v)
    _close(inner[1], -x.sin() * v * v)
    assert not inner[1].requires_grad
    _close(tf.jacfwd(tf.jacfwd(smooth))(x), tf.hessian(smooth)(x))
    third = tf.jacfwd(tf.jacfwd(tf.jacfwd(cubic)))(x)
    _close(third, 6 * tocha.diag_embed(tocha.eye(3, dtype=x.dtype)))
    _close(tf.vmap(tf.jacfwd(tf.jacfwd(smooth)))(tocha.stack([x, v]))[1], tf.hessian(smooth)(v))
    with pytest.raises(RuntimeError, match="independent of the inputs"):
        tf.jvp(lambda a: tf.jvp(lambda b: tocha.ones(2), (a,), (a,), strict=True)[1], (x,), (x,))
    w = _t(3).requires_grad_()
    tf.jacfwd(tf.jacfwd(lambda a: (a * w).sin().sum()))(x).trace().backward()
    _close(w.grad, _hess_trace_grad(x, w))


def _hess_trace_grad(x, w):
    """d/dw of tr(H) for f(a) = sum(sin(a * w)): tr H = -sum(w^2 sin(x w))."""
    wd = w.detach()
    return -(2 * wd * (x * wd).sin() + wd * wd * x * (x * wd).cos())


def test_reverse_over_forward_and_forward_over_reverse():
    x, v = _t(4), _t(4)
    # grad of <jvp(f)(x; v), 1> = H v for f = smooth
    hv = tf.grad(lambda a: tf.jvp(smooth, (a,), (v,))[1])(x)
    _, hv2 = tf.jvp(tf.grad(smooth), (x,), (v,))
    numeric = _numeric_jacobian(tf.grad(smooth), x) @ v.numpy()
    _close(hv, numeric, tol=1e-6)
    _close(hv2, numeric, tol=1e-6)


def test_jvp_stays_connected_to_a_captured_tensor_requiring_grad():
    x, w = _t(3), _t(3).requires_grad_()
    out, tangent = tf.jvp(lambda a: a * a * w, (x,), (tocha.ones_like(x),))
    assert out.requires_grad and tangent.requires_grad
    tangent.sum().backward()
    _close(w.grad, 2 * x)


def test_linearize_matches_jvp_and_checks_tangents():
    x = _t(3)
    out, jvp_fn = tf.linearize(lambda a: a.sin() * a, x)
    _close(out, x.sin() * x)
    v = _t(3)
    _close(jvp_fn(v), tf.jvp(lambda a: a.sin() * a, (x,), (v,))[1])
    with pytest.raises(RuntimeError, match="doesn't match the shape"):
        jvp_fn(tocha.ones(2, dtype=tocha.float64))
    with pytest.raises(RuntimeError, match="doesn't match the dtype"):
        jvp_fn(tocha.ones(3))
    with pytest.raises(RuntimeError, match="same argspec"):
        jvp_fn(v, v)


# -- jacrev, jacfwd, hessian ----------------------------------------------------------------
@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_against_differences(jac):
    x = _t(2, 3)

    def f(a):
        return (a @ a.T).exp().flatten()[:3] * a.sum()

    got = getattr(tf, jac)(f)(x)
    assert got.shape == (3, 2, 3)
    _close(got, _numeric_jacobian(f, x), tol=1e-6)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_structure_for_argnums_and_pytree_outputs(jac):
    x, y = _t(3), _t(2)

    def f(a, b):
        return {"outer": a[:, None] * b, "s": (a.sum() * b.sum(),)}

    got = getattr(tf, jac)(f, argnums=(0, 1))(x, y)
    assert got["outer"][0].shape == (3, 2, 3) and got["outer"][1].shape == (3, 2, 2)
    assert got["s"][0][0].shape == (3,) and got["s"][0][1].shape == (2,)
    _close(got["outer"][0], _numeric_jacobian(lambda a: f(a, y)["outer"], x), tol=1e-6)
    _close(got["outer"][1], _numeric_jacobian(lambda b: f(x, b)["outer"], y), tol=1e-6)
    _close(got["s"][0][1], x.sum() * tocha.ones(2, dtype=tocha.float64))


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_has_aux_and_dict_input(jac):
    d = {"a": _t(2), "b": _t(2)}
    got, aux = getattr(tf, jac)(lambda p: (p["a"] * p["b"], p["a"] + 1), has_aux=True)(d)
    _close(got["a"], tocha.diag(d["b"]))
    _close(got["b"], tocha.diag(d["a"]))
    _close(aux, d["a"] + 1)


@pytest.mark.parametrize("chunk_size", [1, 2, 100])
def test_jacrev_chunk_size(chunk_size):
    x = _t(5)
    _close(
        tf.jacrev(lambda a: a.sin() * a.sum(), chunk_size=chunk_size)(x),
        tf.jacfwd(lambda a: a.sin() * a.sum())(x),
    )


def test_hessian_against_closed_form_and_differences():
    x = _t(4)
    _close(tf.hessian(cubic)(x), tocha.diag(6 * x))
    _close(tf.hessian(smooth)(x), _numeric_jacobian(tf.grad(smooth), x), tol=1e-6)


def test_jacrev_of_jacrev_is_the_hessian():
    x = _t(4)
    _close(tf.jacrev(tf.jacrev(smooth))(x), tf.hessian(smooth)(x))


def test_hessian_of_two_arguments_and_a_dict():
    x, y = _t(2), _t(2)
    h = tf.hessian(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(x, y)
    _close(h[0][0], tocha.diag(2 * y))
    _close(h[0][1], tocha.diag(2 * x))
    _close(h[1][1], tocha.zeros(2, 2, dtype=tocha.float64))
    hd = tf.hessian(lambda d: (d["a"] ** 2 * d["b"]).sum())({"a": x, "b": y})
    _close(hd["a"]["b"], tocha.diag(2 * x))


def test_jacobians_inside_vmap():
    xs = _t(3, 4)
    got = tf.vmap(tf.jacrev(lambda a: a.sin() * a.sum()))(xs)
    assert got.shape == (3, 4, 4)
    for i in range(3):
        _close(got[i], tf.jacfwd(lambda a: a.sin() * a.sum())(xs[i]))


# -- against torch.func ---------------------------------------------------------------------
def _f_mix(x, y):
    return (x.sin() * y).sum() + (x * x * y.exp()).sum()


@pytest.mark.parametrize(
    "name",
    ["grad", "grad_argnums", "jacrev", "jacfwd", "hessian", "jvp", "vjp", "per_sample"],
)
def test_values_match_torch(torch, name):
    rng = np.random.default_rng(11)
    xn, yn, batch_n = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((4, 3))
    results = []
    for lib in (tocha, torch):
        x, y = lib.tensor(xn), lib.tensor(yn)
        fn = lib.func
        if name == "grad":
            out = [fn.grad(_f_mix)(x, y)]
        elif name == "grad_argnums":
            out = list(fn.grad(_f_mix, argnums=(0, 1))(x, y))
        elif name == "jacrev":
            out = list(fn.jacrev(lambda a, b: a.exp() * b.sum(), argnums=(0, 1))(x, y))
        elif name == "jacfwd":
            out = list(fn.jacfwd(lambda a, b: a.exp() * b.sum(), argnums=(0, 1))(x, y))
        elif name == "hessian":
            out = [fn.hessian(_f_mix)(x, y)]
        elif name == "jvp":
            out = list(fn.jvp(lambda a: a.tanh() * a.sum(), (x,), (y,)))
        elif name == "vjp":
            value, vjp_fn = fn.vjp(lambda a: a.tanh() * a.sum(), x)
            out = [value, *vjp_fn(y)]
        else:
            batch = lib.tensor(batch_n)
            out = [fn.vmap(fn.grad(_f_mix), in_dims=(0, None))(batch, y)]
        results.append([t.detach().numpy() for t in out])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


ERRORS = {
    "grad_nonscalar": lambda fn, lib: fn.grad(lambda x: x * 2)(lib.ones(3)),
    "grad_not_tensor_out": lambda fn, lib: fn.grad(lambda x: 3.0)(lib.ones(3)),
    "grad_list_out": lambda fn, lib: fn.grad(lambda x: [x.sum()])(lib.ones(3)),
    "argnum_out_of_range": lambda fn, lib: fn.grad(lambda x: x.sum(), argnums=1)(lib.ones(3)),
    "argnums_empty": lambda fn, lib: fn.grad(lambda x: x.sum(), argnums=())(lib.ones(3)),
    "argnums_float": lambda fn, lib: fn.grad(lambda x: x.sum(), argnums=1.0)(lib.ones(3)),
    "argnums_list": lambda fn, lib: fn.grad(lambda x: x.sum(), argnums=[0])(lib.ones(3)),
    "argnums_repeated": lambda fn, lib: fn.grad(lambda x, y: x.sum(), argnums=(0, 0))(
        lib.ones(3), lib.ones(3)
    ),
    "grad_integer_input": lambda fn, lib: fn.grad(lambda x: x.sum())(lib.arange(3)),
    "grad_non_tensor_input": lambda fn, lib: fn.grad(lambda x: x)(3.0),
    "grad_non_tensor_leaf": lambda fn, lib: fn.grad(lambda d: d["a"].sum())(
        {"a": lib.ones(2), "b": 3}
    ),
    "has_aux_not_pair": lambda fn, lib: fn.grad(lambda x: x.sum(), has_aux=True)(lib.ones(3)),
    "aux_not_tensor": lambda fn, lib: fn.grad(lambda x: (x.sum(), "a"), has_aux=True)(lib.ones(3)),
    "vjp_not_tensor_out": lambda fn, lib: fn.vjp(lambda x: 3.0, lib.ones(3)),
    "vjp_has_aux_not_pair": lambda fn, lib: fn.vjp(lambda x: x, lib.ones(3), has_aux=True),
    "vjp_cotangent_structure": lambda fn, lib: fn.vjp(lambda x: x * 2, lib.ones(3))[1](
        (lib.ones(3),)
    ),
    "jvp_primals_not_tuple": lambda fn, lib: fn.jvp(lambda x: x, lib.ones(3), lib.ones(3)),
    "jvp_primals_list": lambda fn, lib: fn.jvp(lambda x: x, [lib.ones(3)], [lib.ones(3)]),
    "jvp_structure": lambda fn, lib: fn.jvp(lambda x: x, ((lib.ones(1),),), ([lib.ones(1)],)),
    "jvp_lengths": lambda fn, lib: fn.jvp(lambda x: x, (lib.ones(1),), (lib.ones(1),) * 2),
    "jvp_tangents_not_tuple": lambda fn, lib: fn.jvp(lambda x: x, (lib.ones(3),), lib.ones(3)),
    "jvp_empty": lambda fn, lib: fn.jvp(lambda: lib.ones(1), (), ()),
    "jvp_non_tensor_primal": lambda fn, lib: fn.jvp(lambda x: x, (3.0,), (1.0,)),
    "jvp_non_tensor_tangent": lambda fn, lib: fn.jvp(lambda x: x, (lib.ones(3),), (1.0,)),
    "jvp_not_tensor_out": lambda fn, lib: fn.jvp(lambda x: 3.0, (lib.ones(3),), (lib.ones(3),)),
    "jvp_has_aux_not_pair": lambda fn, lib: fn.jvp(
        lambda x: x, (lib.ones(3),), (lib.ones(3),), has_aux=True
    ),
    "jvp_strict": lambda fn, lib: fn.jvp(
        lambda x: lib.ones(3), (lib.ones(3),), (lib.ones(3),), strict=True
    ),
    "jacrev_chunk_size": lambda fn, lib: fn.jacrev(lambda x: x, chunk_size=0),
    "jacrev_not_tensor_out": lambda fn, lib: fn.jacrev(lambda x: 3.0)(lib.ones(3)),
    "jacfwd_randomness": lambda fn, lib: fn.jacfwd(lambda x: x, randomness="bad")(lib.ones(3)),
    "linearize_tangent_shape": lambda fn, lib: fn.linearize(lambda x: x * 2, lib.ones(3))[1](
        lib.ones(2)
    ),
    "linearize_tangent_dtype": lambda fn, lib: fn.linearize(lambda x: x * 2, lib.ones(3))[1](
        lib.ones(3, dtype=lib.float64)
    ),
    "linearize_tangent_count": lambda fn, lib: fn.linearize(lambda x: x * 2, lib.ones(3))[1](
        lib.ones(3), lib.ones(3)
    ),
}


def _error(call, lib):
    with pytest.raises(Exception) as error:
        call(lib.func, lib)
    return type(error.value), str(error.value).replace("torch.", "tocha.")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    assert _error(ERRORS[name], tocha) == _error(ERRORS[name], torch)
