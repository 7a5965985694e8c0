"""Named tuples that ops returning several tensors give back, as `torch.return_types`.

``tocha.max(x, 0)`` returns ``return_types.max(values, indices)``: a tuple (it unpacks and
indexes like one) whose items are also fields (``.values``, ``.indices``).
"""

from __future__ import annotations

from operator import itemgetter

__all__ = [
    "aminmax",
    "cummax",
    "cummin",
    "histogram",
    "histogramdd",
    "kthvalue",
    "max",
    "median",
    "min",
    "mode",
    "nanmedian",
    "sort",
    "topk",
    "triangular_solve",
]


class _ReturnType(tuple):
    """Base of the return types: a tuple of a fixed number of named items."""

    __slots__ = ()
    _fields: tuple = ()

    def __new__(cls, sequence):
        items = tuple.__new__(cls, sequence)
        if len(items) != len(cls._fields):
            raise TypeError(
                f"tocha.return_types.{cls.__name__} takes a {len(cls._fields)}-sequence "
                f"({len(items)}-sequence given)"
            )
        return items

    def __repr__(self) -> str:
        fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"tocha.return_types.{type(self).__name__}(\n{fields})"

    def __reduce__(self):
        return (type(self), (tuple(self),))


def _return_type(name: str, fields: tuple) -> type:
    namespace = {
        "__slots__": (),
        "_fields": fields,
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"{name}({', '.join(fields)})",
    }
    for i, field in enumerate(fields):
        namespace[field] = property(itemgetter(i), doc=f"Item {i} of the tuple.")
    return type(name, (_ReturnType,), namespace)


_VALUES_INDICES = ("values", "indices")

max = _return_type("max", _VALUES_INDICES)  # noqa: A001
min = _return_type("min", _VALUES_INDICES)  # noqa: A001
median = _return_type("median", _VALUES_INDICES)
nanmedian = _return_type("nanmedian", _VALUES_INDICES)
mode = _return_type("mode", _VALUES_INDICES)
cummax = _return_type("cummax", _VALUES_INDICES)
cummin = _return_type("cummin", _VALUES_INDICES)
sort = _return_type("sort", _VALUES_INDICES)
topk = _return_type("topk", _VALUES_INDICES)
kthvalue = _return_type("kthvalue", _VALUES_INDICES)
aminmax = _return_type("aminmax", ("min", "max"))
histogram = _return_type("histogram", ("hist", "bin_edges"))
histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))
triangular_solve = _return_type("triangular_solve", ("solution", "cloned_coefficient"))
