"""What the transforms check in their arguments and in what the function returns, with
torch.func's errors: `argnums`, the tensors of a pytree, ``(output, aux)`` pairs, and the
printed form of a pytree's structure."""

from __future__ import annotations

from tocha import Tensor

from ._pytree import TreeSpec, tree_flatten, tree_unflatten


def check_argnums(argnums) -> None:
    """RuntimeError unless `argnums` is an int or a non-empty tuple of distinct ints."""
    if isinstance(argnums, int):
        return
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    for a in argnums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")


def _position(argnum: int, n: int) -> int:
    if not -n <= argnum < n:
        raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")
    return argnum % n


def select(args: tuple, argnums) -> tuple:
    """The positions of ``args`` that `argnums` (int or tuple, negative from the end) names."""
    check_argnums(argnums)
    if isinstance(argnums, int):
        return (_position(argnums, len(args)),)
    return tuple(_position(a, len(args)) for a in argnums)


def chosen(args: tuple, argnums):
    """The arguments `argnums` names: one pytree for an int, a tuple of them for a tuple."""
    positions = select(args, argnums)
    if isinstance(argnums, int):
        return args[positions[0]]
    return tuple(args[p] for p in positions)


def replace(args: tuple, positions: tuple, values: tuple) -> tuple:
    """`args` with the entries at `positions` replaced by `values`."""
    out = list(args)
    for p, v in zip(positions, values):
        out[p] = v
    return tuple(out)


def tensor_leaves(tree) -> tuple[list, TreeSpec]:
    """The leaves and spec of an input pytree; ValueError for a leaf that is not a Tensor."""
    leaves, spec = tree_flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
    return leaves, spec


def output_leaves(tree, api: str) -> tuple[list, TreeSpec]:
    """The leaves and spec of what a function returned; RuntimeError naming `api` for a
    leaf that is not a Tensor."""
    leaves, spec = tree_flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(leaf)}"
            )
    return leaves, spec


def split_aux(result, has_aux: bool, api: str) -> tuple:
    """``(output, aux)`` of a function's result (aux None without `has_aux`)."""
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    check_aux(result[1])
    return result


def check_aux(aux) -> None:
    """RuntimeError unless every leaf of `aux` is a Tensor."""
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def spec_repr(spec: TreeSpec, indent: int = 0) -> str:
    """A pytree structure as PyTorch prints one: ``*`` for a leaf, else
    ``TreeSpec(tuple, None, [*,\\n  *])`` with one line per child after the first."""
    if spec.kind is None:
        return "*"
    kind = spec.kind
    name = "namedtuple" if kind == "namedtuple" else kind.__name__
    context = spec.context
    indent += 2
    children = [spec_repr(child, indent) for child in spec.children]
    body = (",\n" + " " * indent).join(children)
    return f"TreeSpec({name}, {context}, [{body}])"


class _Leaf:
    def __repr__(self) -> str:
        return "*"


def spec_pprint(spec: TreeSpec) -> str:
    """A pytree structure written as the tree itself with ``*`` for each leaf, as PyTorch's
    ``treespec_pprint``: ``{'a': *, 'b': (*,)}``."""
    return repr(tree_unflatten([_Leaf()] * spec.num_leaves, spec))
