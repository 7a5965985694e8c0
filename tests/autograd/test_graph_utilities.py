"""``autograd.graph``'s utilities (gradient edges, versions, saved-tensor hooks, mutation of
saved tensors, node metadata) and the engine's handling of what hooks return.

Each scenario runs on a library (tocha, or PyTorch when installed) and returns plain data:
the expected values are PyTorch's, checked live against it where it is installed."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.fixture(params=["tocha", "torch"])
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch")
    return importlib.import_module(request.param)


def test_gradient_edge_of_a_leaf_and_of_a_non_leaf(lib):
    graph = lib.autograd.graph
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    c = (b * b).sum()
    edge = graph.get_gradient_edge(b)
    assert isinstance(edge, graph.GradientEdge)
    assert edge.node is b.grad_fn and edge.output_nr == 0
    assert graph.get_gradient_edge(a).node.name() == "torch::autograd::AccumulateGrad"
    (gb,) = lib.autograd.grad(c, edge, retain_graph=True)
    assert gb.tolist() == [6.0, 12.0]
    gb, ga = lib.autograd.grad(c, [edge, graph.get_gradient_edge(a)])
    assert gb.tolist() == [6.0, 12.0] and ga.tolist() == [18.0, 36.0]
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
        graph.get_gradient_edge(lib.ones(2))


def test_increment_version(lib):
    x = lib.ones(2)
    before = x._version
    lib.autograd.graph.increment_version(x)
    lib.autograd.graph.increment_version([x, x])
    assert x._version - before == 3


def test_allow_mutation_on_saved_tensors(lib):
    graph = lib.autograd.graph
    with graph.allow_mutation_on_saved_tensors():
        a = lib.ones(3, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        out.backward()
        c = a * 1
        d = c.exp()
        d.mul_(2)  # the saved output itself
        d.sum().backward()
    assert a.grad.tolist() == pytest.approx([2 + 2 * 2.718281828] * 3)
    with graph.allow_mutation_on_saved_tensors():
        out = (a.clone() ** 2).sum()
    with pytest.raises(AssertionError, match="Trying to backward outside"):
        out.backward()
    with pytest.raises(RuntimeError, match="cannot be nested"):
        with graph.allow_mutation_on_saved_tensors():
            with graph.allow_mutation_on_saved_tensors():
                pass


def test_saved_tensors_hooks_pack_with_grad_off_and_skip_version_checks(lib):
    graph = lib.autograd.graph
    a = lib.ones(3, requires_grad=True)
    calls = []

    def pack(t):
        calls.append(lib.is_grad_enabled())
        return t * t  # recorded if grad were on: it would pack again

    with graph.saved_tensors_hooks(pack, lambda t: t.sqrt()):
        y = (a * a).sum()
    assert calls == [False, False]
    b = lib.ones(3)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = (a * b).sum()
    b.add_(1)  # what the hooks keep is theirs: unchecked
    y.backward()
    z.backward()
    assert a.grad.tolist() == [4.0, 4.0, 4.0]


def test_saved_tensors_hooks_apply_to_custom_functions(lib):
    graph = lib.autograd.graph
    log = []

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            log.append("backward")
            return 2 * grad * x

    a = lib.tensor([3.0], requires_grad=True)
    with graph.saved_tensors_hooks(
        lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t
    ):
        y = Square.apply(a)
    y.backward()
    assert log == ["pack", "unpack", "backward"] and a.grad.tolist() == [6.0]


def test_unpack_hook_must_give_a_tensor(lib):
    a = lib.ones(2, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = (a * a).sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.backward()


def test_disable_saved_tensors_hooks(lib):
    graph = lib.autograd.graph
    a = lib.ones(2, requires_grad=True)
    with graph.disable_saved_tensors_hooks("no hooks here"):
        (a * a).sum().backward()  # saving without hooks is fine
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.disable_saved_tensors_hooks("no hooks here"):
                pass


def test_node_metadata_is_kept(lib):
    a = lib.ones(2, requires_grad=True)
    node = (a * 2).grad_fn
    node.metadata["stage"] = 3
    assert node.metadata == {"stage": 3}


def test_node_hooks_may_replace_gradients(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 10, None))
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]
    z = x * 2
    z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: 5)
    with pytest.raises(TypeError, match="expected tuple, but hook returned 'int'"):
        z.sum().backward()
    w = x.exp()
    w.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0], grad_outputs[0]))
    with pytest.raises(RuntimeError, match="has returned an incorrect number of values"):
        w.sum().backward()


def test_tensor_hook_results_are_checked(lib):
    def backward_with(hook, leaf):
        x = lib.ones(2, requires_grad=True)
        y = x if leaf else x * 2
        y.register_hook(hook)
        (y * 3).sum().backward()

    for leaf in (True, False):
        with pytest.raises(TypeError, match="expected Variable, but hook returned 'str'"):
            backward_with(lambda g: "no", leaf)
        with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
            backward_with(lambda g: lib.ones(3), leaf)
        with pytest.raises(RuntimeError, match="has changed the type of value"):
            backward_with(lambda g: g.double(), leaf)


def test_post_accumulate_grad_hook_must_return_none(lib):
    x = lib.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: lib.ones(2))
    with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
        (x * 3).sum().backward()


def test_leaf_hooks_run_in_autograd_grad(lib):
    seen = []
    x = lib.ones(2, requires_grad=True)
    x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (gx,) = lib.autograd.grad((x * 3).sum(), x)
    assert seen == [[3.0, 3.0]] and gx.tolist() == [30.0, 30.0] and x.grad is None


def test_hooks_of_nodes_off_the_path_to_the_inputs_do_not_run(lib):
    seen = []
    x = lib.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    z.register_hook(lambda g: seen.append("z"))
    w = lib.ones(2, requires_grad=True)
    w.register_hook(lambda g: seen.append("w"))
    lib.autograd.grad((y * z * w).sum(), y)
    assert seen == []
    (y * z * w).sum().backward(inputs=[x])
    assert seen == ["z"]


def test_backward_inputs_of_a_retained_non_leaf_count_once(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward(inputs=[y])
    assert y.grad.tolist() == [4.0, 4.0] and x.grad is None


def test_messages_of_unused_and_empty_inputs(lib):
    x = lib.ones(2, requires_grad=True)
    y = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Tensor at index 1 appears to not have been used"):
        lib.autograd.grad((x * 2).sum(), [x, y])
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty"):
        (x * 2).sum().backward(inputs=[])


def test_autograd_grad_stops_at_a_non_leaf_input(lib):
    a = lib.ones(3, requires_grad=True)
    y = a * 2
    seen = []
    y.grad_fn.register_prehook(lambda grad_outputs: seen.append("node"))
    y.register_hook(lambda grad: seen.append("tensor"))
    lib.autograd.grad((y * y).sum(), y)
    assert seen == ["tensor"]
    y.sum().backward()  # y's node did not run: it still holds what it saved
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_retained_gradient_follows_an_in_place_change(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 1
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.mul_(2)
    assert y.retains_grad
    (y * 3).sum().backward()
    assert y.grad.tolist() == [3.0] * 3 and seen == [[6.0] * 3]
    x = lib.ones(3, requires_grad=True)
    y = x * 1
    y.retain_grad()
    view = y[:2]
    view.retain_grad()
    view.mul_(2)
    (y * 3).sum().backward()
    assert y.grad.tolist() == [3.0] * 3 and x.grad.tolist() == [6.0, 6.0, 3.0]


def test_every_node_is_a_graph_node(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    accumulate = y.grad_fn.next_functions[0][0]
    assert isinstance(y.grad_fn, lib.autograd.graph.Node)
    assert isinstance(accumulate, lib.autograd.graph.Node)
    assert not isinstance(x, lib.autograd.graph.Node)


def test_root_gradient_errors(lib):
    a = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        lib.autograd.backward([(a * 2).sum(), (a * 3).sum()], [lib.tensor(1.0)])
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got float"):
        (a * 2).backward([1.0, 1.0])
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        lib.autograd.backward([(a * 2).sum(), lib.ones(())])
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        lib.autograd.grad(a.sum(), a, only_inputs=False)


def test_in_place_change_of_a_saved_tensor_names_it_as_pytorch(lib):
    def error_of(build):
        with pytest.raises(RuntimeError) as error:
            build().sum().backward()
        return str(error.value).split(": ", 1)[1]

    a = lib.ones(2, requires_grad=True)

    def saved_output():
        b = a.exp()
        b.add_(1)
        return b

    def saved_input():
        c = a * 1
        b = c.sin()
        c.add_(1)
        return b

    assert error_of(saved_output).startswith(
        "[torch.FloatTensor [2]], which is output 0 of Exp, is at version 1; expected version "
        "0 instead. Hint: enable anomaly detection"
    )
    assert error_of(saved_input).startswith(
        "[torch.FloatTensor [2]], which is output 0 of Add, is at version 1; expected version 0"
    )


def test_materialized_gradients_join_the_graph_with_create_graph(lib):
    x = lib.ones(2, requires_grad=True)
    unused = lib.ones(3, requires_grad=True)
    gx, gu = lib.autograd.grad(
        (x * x).sum(), [x, unused], materialize_grads=True, create_graph=True
    )
    assert gx.requires_grad and gu.requires_grad and gu.tolist() == [0.0, 0.0, 0.0]
    _, gu = lib.autograd.grad((x * x).sum(), [x, unused], materialize_grads=True)
    assert not gu.requires_grad


def test_backward_with_create_graph_warns_once_per_process():
    script = (
        "import warnings, tocha\n"
        "warnings.simplefilter('always')\n"
        "x = tocha.ones(2, requires_grad=True)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    tocha.autograd.grad((x * x).sum(), x, create_graph=True)\n"
        "    (x * x).sum().backward(create_graph=True)\n"
        "    (x * x).sum().backward(create_graph=True)\n"
        "print(sum('reference cycle' in str(w.message) for w in caught))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "1", done.stderr


def test_saved_fields_of_a_node(lib):
    x = lib.randn(3, requires_grad=True)
    y = x.pow(2)
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_exponent == 2
    assert (x * 2.0).grad_fn._saved_self is None  # not needed: not kept
    e = x.exp()
    result = e.grad_fn._saved_result
    assert result is not e and result.equal(e) and result.grad_fn is e.grad_fn
    c = x.clamp(0, 1)
    assert (c.grad_fn._saved_min, c.grad_fn._saved_max) == (0, 1)
    with pytest.raises(AttributeError):
        _ = y.grad_fn._saved_nothing
    e.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        _ = e.grad_fn._saved_result


def test_raw_saved_tensor_hooks(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    log = []
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(
        lambda t: log.append("pack") or t * 1, lambda t: log.append("unpack") or t
    )
    e = x.exp()
    e.grad_fn._raw_saved_result.register_hooks(
        lambda t: log.append("pack result") or t.detach().clone(),
        lambda t: log.append("unpack result") or t,
    )
    (y + e).sum().backward()
    assert sorted(log) == ["pack", "pack result", "unpack", "unpack result"]
    assert x.grad.tolist() == pytest.approx([2 + 2.718281828, 4 + 7.389056099])
    with pytest.raises(RuntimeError, match="register_hooks on a saved tensor after it has been"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def test_backward_inputs_as_gradient_edges(lib):
    edge_of = lib.autograd.graph.get_gradient_edge
    a = lib.ones(2, requires_grad=True)
    y = a * 2
    z = (y * 3).sum()
    z.backward(inputs=[edge_of(a)], retain_graph=True)
    assert a.grad.tolist() == [6.0, 6.0]
    z.backward(inputs=[edge_of(y)])  # a non-leaf's edge: nothing to accumulate into
    assert a.grad.tolist() == [6.0, 6.0] and y.grad is None


def test_gradient_edges_as_outputs(lib):
    edge_of = lib.autograd.graph.get_gradient_edge
    x = lib.ones(2, requires_grad=True)
    y = x * 3
    (gx,) = lib.autograd.grad(edge_of(y), x, grad_outputs=lib.ones(2), retain_graph=True)
    assert gx.tolist() == [3.0, 3.0]
    (gx,) = lib.autograd.grad([edge_of(y)], [x], [lib.full((2,), 2.0)], retain_graph=True)
    assert gx.tolist() == [6.0, 6.0]
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        lib.autograd.grad(edge_of(y), x)
    lib.autograd.backward([edge_of(y)], [lib.ones(2)])
    assert x.grad.tolist() == [3.0, 3.0]


def test_hook_handles_are_context_managers(lib):
    x = lib.ones(2, requires_grad=True)
    with x.register_hook(lambda g: g * 10):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [11.0, 11.0]
    y = x * 2
    with y.grad_fn.register_prehook(lambda grads: (grads[0] * 0,)):
        pass
    y.sum().backward()
    assert x.grad.tolist() == [13.0, 13.0]


def test_a_view_used_after_its_base_changed_in_place(lib):
    x = lib.ones(4, requires_grad=True)
    y = x * 1
    view = y[:2]
    seen = []
    view.register_hook(lambda g: seen.append(g.tolist()))  # on the view's old history
    y.mul_(2)
    (view * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 0.0, 0.0] and seen == []
    x = lib.ones(4, requires_grad=True)
    y = x * 1
    view = y[1:3]
    view.retain_grad()
    y.retain_grad()
    y.add_(1)
    (view * 2).sum().backward()
    assert view.grad.tolist() == [2.0, 2.0]
    assert y.grad.tolist() == x.grad.tolist() == [0.0, 2.0, 2.0, 0.0]


def test_views_of_a_base_written_through_another_view(lib):
    x = lib.ones(4, requires_grad=True)
    y = x * 1
    first, second = y[:2], y[1:3]
    first.mul_(5)  # y[1] is 5x now, seen by second
    (second * 1).sum().backward()
    assert x.grad.tolist() == [0.0, 5.0, 1.0, 0.0]
    z = x * 1
    z[:2].mul_(2)
    assert z.grad_fn.name() == "torch::autograd::CopySlices"


def test_a_view_chain_made_after_the_base_changed_keeps_its_history(lib):
    x = lib.ones(2, 3, requires_grad=True)
    y = x * 1
    y.mul_(2)
    chained = y.view(3, 2).t()
    name = chained.grad_fn.name()
    (chained * 1).sum().backward()
    assert chained.grad_fn.name() == name and x.grad.tolist() == [[2.0] * 3] * 2
