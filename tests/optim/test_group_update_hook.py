"""``register_group_update``: the published hook through which a compiler supplies the update
of a parameter group (tocha-compiler's compiled ``opt.step``)."""

from __future__ import annotations

import copy
import pickle

import pytest

import tocha
from tocha.library import bump_version


def _params(n=3):
    gen = tocha.Generator().manual_seed(0)
    params = [tocha.randn(4, generator=gen, requires_grad=True) for _ in range(n)]
    for p in params:
        p.grad = tocha.ones(4)
    return params


def test_an_update_returning_true_replaces_the_group_update():
    params = _params()
    opt = tocha.optim.SGD([{"params": params[:2]}, {"params": params[2:]}], lr=0.1)
    before = [p.detach().clone() for p in params]
    calls = []

    def update(optimizer, group):
        calls.append((optimizer, group, tocha.is_grad_enabled()))
        if group is optimizer.param_groups[0]:
            for p in group["params"]:
                p._data -= 1.0
                bump_version(p)
            return True
        return False

    handle = opt.register_group_update(update)
    opt.step()
    assert [(o, g) for o, g, _ in calls] == [(opt, opt.param_groups[0]), (opt, opt.param_groups[1])]
    assert not any(grad for _, _, grad in calls)  # under no_grad
    tocha.testing.assert_close(params[0], before[0] - 1.0)  # the hook's update only
    tocha.testing.assert_close(params[2], before[2] - 0.1)  # declined: SGD's own update
    handle.remove()
    opt.step()
    assert len(calls) == 2
    tocha.testing.assert_close(params[0], before[0] - 1.1)


def test_later_updates_are_asked_first_and_the_first_true_wins():
    opt = tocha.optim.Adam(_params(), lr=0.1)
    order = []
    opt.register_group_update(lambda o, g: order.append("first") or True)
    with opt.register_group_update(lambda o, g: order.append("second") or False):
        opt.step()
    assert order == ["second", "first"]
    opt.step()
    assert order == ["second", "first", "first"]
    assert opt.state == {}  # Adam's own update never ran


def test_step_hooks_and_closure_run_around_the_group_updates():
    opt = tocha.optim.SGD(_params(), lr=0.1)
    order = []
    opt.register_step_pre_hook(lambda *a: order.append("pre"))
    opt.register_step_post_hook(lambda *a: order.append("post"))
    opt.register_group_update(lambda o, g: order.append("update") or True)
    assert opt.step(lambda: order.append("closure") or 1.5) == 1.5
    assert order == ["pre", "closure", "update", "post"]


@pytest.mark.parametrize("copier", [copy.deepcopy, lambda o: pickle.loads(pickle.dumps(o))])
def test_copies_do_not_carry_registered_updates(copier):
    params = _params()
    opt = tocha.optim.SGD(params, lr=0.1)
    opt.register_group_update(lambda o, g: True)
    clone = copier(opt)
    assert not clone._group_updates
    for p in clone.param_groups[0]["params"]:
        p.grad = tocha.ones(4)
    before = [p.detach().clone() for p in clone.param_groups[0]["params"]]
    clone.step()
    for p, b in zip(clone.param_groups[0]["params"], before):
        tocha.testing.assert_close(p, b - 0.1)
