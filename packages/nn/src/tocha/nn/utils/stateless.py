"""Calling a module with other parameters and buffers, as ``torch.nn.utils.stateless``."""

from __future__ import annotations

import contextlib

from ..modules.module import Module

__all__ = ["functional_call"]


def _tied_names(module: Module, names) -> dict[str, list[str]]:
    """For each given name, the other names under which the same tensor is registered."""
    by_id: dict[int, list[str]] = {}
    for name, t in module.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    tied = {}
    for group in by_id.values():
        given = [n for n in group if n in names]
        if len(group) > 1 and given:
            for n in group:
                if n not in names:
                    tied[n] = given[0]
    return tied


@contextlib.contextmanager
def _reparametrize(module: Module, tensors: dict, tie_weights: bool, strict: bool):
    """Within the block, the modules' entries named in `tensors` are replaced."""
    if tie_weights:
        tensors = {
            **tensors,
            **{n: tensors[src] for n, src in _tied_names(module, tensors).items()},
        }
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(expected - set(tensors))
        unexpected = sorted(set(tensors) - expected)
        if missing or unexpected:
            messages = []
            if unexpected:
                messages.append("Unexpected key(s): {}.".format(", ".join(map(repr, unexpected))))
            if missing:
                messages.append("Missing key(s): {}.".format(", ".join(map(repr, missing))))
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(
                    module._get_name(), "\n\t".join(messages)
                )
            )
    saved = []
    try:
        for name, value in tensors.items():
            path, _, attr = name.rpartition(".")
            owner = module.get_submodule(path)
            for store in (owner._parameters, owner._buffers):
                if attr in store:
                    saved.append((store, attr, store[attr]))
                    store[attr] = value
                    break
            else:
                saved.append((owner.__dict__, attr, owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, value)
        yield
    finally:
        for store, attr, old in reversed(saved):
            if old is _MISSING:
                store.pop(attr, None)
            else:
                store[attr] = old


_MISSING = object()


def functional_call(
    module: Module,
    parameter_and_buffer_dicts,
    args=None,
    kwargs=None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """Call `module` with its parameters and buffers replaced by the tensors of
    `parameter_and_buffer_dicts` (a dict, or a sequence of dicts, of dotted names).

    Example:
        >>> functional_call(model, {"weight": w, "bias": b}, (x,))
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    else:
        dicts = list(parameter_and_buffer_dicts)
        seen: dict[str, int] = {}
        for d in dicts:
            for key in d:
                seen[key] = seen.get(key, 0) + 1
        repeated = [k for k, n in seen.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of "
                "functional call is ambiguous"
            )
        tensors = {k: v for d in dicts for k, v in d.items()}
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, tensors, tie_weights, strict):
        return module(*args, **kwargs)
