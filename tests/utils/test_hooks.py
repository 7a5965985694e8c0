"""tocha.utils.hooks.RemovableHandle, with the behaviour of torch.utils.hooks' (checked by
hand against torch 2.13: the dicts are shared with the handle, which the recorded oracle
cannot do)."""

from __future__ import annotations

import gc
import pickle
from collections import OrderedDict

import pytest

from tocha.utils.hooks import RemovableHandle, unserializable_hook


def test_ids_are_unique_and_increasing():
    hooks: OrderedDict = OrderedDict()
    first, second = RemovableHandle(hooks), RemovableHandle(hooks)
    assert isinstance(first.id, int) and second.id == first.id + 1


def test_remove_deletes_the_hook_once():
    hooks: OrderedDict = OrderedDict()
    handle = RemovableHandle(hooks)
    hooks[handle.id] = print
    other = RemovableHandle(hooks)
    hooks[other.id] = repr
    handle.remove()
    assert list(hooks) == [other.id]
    handle.remove()  # a second remove does nothing
    assert list(hooks) == [other.id]


def test_extra_dicts():
    hooks: OrderedDict = OrderedDict()
    extra, more = OrderedDict(), OrderedDict()
    handle = RemovableHandle(hooks, extra_dict=[extra, more])
    for d in (hooks, extra, more):
        d[handle.id] = print
    handle.remove()
    assert not hooks and not extra and not more
    single = RemovableHandle(hooks, extra_dict=extra)
    hooks[single.id] = extra[single.id] = print
    single.remove()
    assert not hooks and not extra


def test_context_manager_removes_on_exit():
    hooks: OrderedDict = OrderedDict()
    with RemovableHandle(hooks) as handle:
        hooks[handle.id] = print
        assert handle.id in hooks
    assert handle.id not in hooks


def test_plain_dicts_work():
    hooks: dict = {}
    handle = RemovableHandle(hooks)
    hooks[handle.id] = print
    handle.remove()
    assert hooks == {}


def test_the_handle_does_not_keep_the_dict_alive():
    hooks: OrderedDict = OrderedDict()
    handle = RemovableHandle(hooks)
    hooks[handle.id] = print
    del hooks
    gc.collect()
    assert handle.hooks_dict_ref() is None
    handle.remove()


def test_pickled_with_its_dict():
    hooks: OrderedDict = OrderedDict()
    handle = RemovableHandle(hooks)
    hooks[handle.id] = "hook"
    hooks2, handle2 = pickle.loads(pickle.dumps((hooks, handle)))
    assert handle2.id == handle.id and hooks2 == {handle.id: "hook"}
    handle2.remove()
    assert hooks2 == {} and handle.id in hooks
    assert RemovableHandle(OrderedDict()).id > handle.id


def test_unpickled_ids_stay_unique():
    state = (OrderedDict(), RemovableHandle.next_id + 100, ())
    handle = RemovableHandle.__new__(RemovableHandle)
    handle.__setstate__(state)
    assert RemovableHandle(OrderedDict()).id == handle.id + 1


def test_unserializable_hook_marks_the_function():
    def hook(grad):
        return grad

    assert unserializable_hook(hook) is hook and hook.__torch_unserializable__ is True


def test_module_handles_remove_hooks():
    """tocha.nn's module hooks return their own handle with the same protocol."""
    nn = pytest.importorskip("tocha.nn")
    module = nn.Identity()
    calls = []
    handle = module.register_forward_hook(lambda *args: calls.append(1))
    assert isinstance(handle.id, int)
    with handle:
        module(1.0)
    module(1.0)
    assert calls == [1]
