"""Operator schemas, as PyTorch writes them: ``ns::name.overload(Tensor x, float alpha=1.)
-> Tensor``. `parse_schema` reads one (`FunctionSchema`), `str()` prints it as PyTorch
does, and `FunctionSchema.bind` checks a call's arguments against it, raising PyTorch's
RuntimeErrors."""

from __future__ import annotations

import builtins
import math
import numbers
import re
from typing import Any

__all__ = ["AliasInfo", "Argument", "FunctionSchema", "SchemaType", "parse_schema"]

BASE_TYPES = (
    "Tensor",
    "int",
    "SymInt",
    "float",
    "bool",
    "str",
    "Scalar",
    "ScalarType",
    "Device",
    "Layout",
    "MemoryFormat",
    "Generator",
    "complex",
    "Dimname",
    "Storage",
    "Stream",
    "Any",
)
_DISPLAY = {
    "SymInt": "int",
    "Scalar": "number",
    "ScalarType": "int",
    "Layout": "int",
    "MemoryFormat": "int",
}
_TOKEN = re.compile(
    r"\s*(?:(?P<number>-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))"
    r"|(?P<string>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)?(?:\.[A-Za-z_][A-Za-z0-9_]*)?)"
    r"|(?P<arrow>->)|(?P<punct>[()\[\],=*?!|-]))"
)


class SchemaType:
    """An argument's type: `base` (``"Tensor"``, ``"int"``...), whether it is a list (and
    of what fixed length), whether the element and the whole may be None."""

    __slots__ = ("base", "elem_optional", "is_list", "optional", "size")

    def __init__(self, base, is_list=False, size=None, elem_optional=False, optional=False):
        self.base = base
        self.is_list = is_list
        self.size = size
        self.elem_optional = elem_optional
        self.optional = optional

    def __str__(self) -> str:
        name = _DISPLAY.get(self.base, self.base)
        if self.elem_optional:
            name = f"Optional[{name}]"
        if self.is_list:
            name = f"List[{name}]"
        return f"Optional[{name}]" if self.optional else name

    def spelled(self, alias: str | None) -> str:
        """The type as a schema string writes it, with its alias annotation."""
        text = self.base + (f"({alias})" if alias else "")
        if self.elem_optional:
            text += "?"
        if self.is_list:
            text += f"[{self.size}]" if self.size is not None else "[]"
        return text + ("?" if self.optional else "")

    @property
    def is_tensor_like(self) -> bool:
        return self.base == "Tensor"


class AliasInfo:
    """An argument's alias annotation: the alias set it belongs to, and whether the op
    writes to it (``a!``)."""

    def __init__(self, spelled: str) -> None:
        self.is_write = spelled.endswith("!")
        self.before_set = {spelled.rstrip("!")}
        self.after_set = set(self.before_set)

    def __repr__(self) -> str:
        return f"AliasInfo(is_write={self.is_write}, before_set={self.before_set})"


class Argument:
    """One argument (or return) of a schema: its `name`, `type`, `default` (when
    `has_default`), whether it is keyword-only, and its alias annotation (``"a!"``)."""

    def __init__(self, name: str, type: SchemaType, *, kwarg_only=False, alias=None) -> None:  # noqa: A002
        self.name = name
        self.type = type
        self.default: Any = None
        self.has_default = False
        self.default_text: str | None = None
        self.kwarg_only = kwarg_only
        self.alias = alias

    @property
    def default_value(self) -> Any:
        """The default as PyTorch's schema reports it (dtypes, layouts and memory formats
        as their enum numbers); the kernel receives `default` itself."""
        return _enum_code(self.default)

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.endswith("!")

    @property
    def alias_info(self) -> AliasInfo | None:
        """The alias annotation (``Tensor(a!)``), None without one."""
        return None if self.alias is None else AliasInfo(self.alias)

    def has_default_value(self) -> bool:
        return self.has_default

    @property
    def is_out(self) -> bool:
        return self.is_write and self.kwarg_only

    @property
    def N(self) -> int | None:  # noqa: N802 (PyTorch's name)
        return self.type.size

    @property
    def real_type(self) -> SchemaType:
        return self.type

    def __str__(self) -> str:
        text = self.type.spelled(self.alias)
        if self.name:
            text += f" {self.name}"
        if self.has_default:
            text += f"={self.default_text}"
        return text


class FunctionSchema:
    """A parsed schema: `name` (``"ns::op"``), `overload_name`, `arguments`, `returns`."""

    def __init__(self, name, overload_name, arguments, returns, returns_tuple) -> None:
        self.name = name
        self.overload_name = overload_name
        self.arguments: list[Argument] = arguments
        self.returns: list[Argument] = returns
        self._returns_tuple = returns_tuple

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    def __str__(self) -> str:
        head = self.name + (f".{self.overload_name}" if self.overload_name else "")
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        rets = ", ".join(str(r) for r in self.returns)
        if self._returns_tuple or len(self.returns) != 1:
            rets = f"({rets})"
        return f"{head}({', '.join(parts)}) -> {rets}"

    def __repr__(self) -> str:
        return str(self)

    def bind(self, args: tuple, kwargs: dict) -> tuple[list, dict]:
        """Check a call against the schema; returns its positional values and keyword-only
        values (defaults filled in), as the kernel receives them."""
        positional = [a for a in self.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            self._too_many(args, positional)
        for key in kwargs:
            if not any(a.name == key for a in self.arguments):
                raise RuntimeError(
                    f"Unknown keyword argument '{key}' for operator '{self.name}'. Schema: {self}"
                )
        values, kw = [], {}
        for position, arg in enumerate(self.arguments):
            if position < len(args) and not arg.kwarg_only:
                value = args[position]
            elif arg.name in kwargs:
                value = kwargs[arg.name]
            elif arg.has_default:
                value = arg.default
            else:
                raise RuntimeError(
                    f"{self.name}() is missing value for argument '{arg.name}'. Declaration: {self}"
                )
            self._check(arg, position, value)
            if arg.kwarg_only:
                kw[arg.name] = value
            else:
                values.append(value)
        return values, kw

    def _too_many(self, args, positional) -> None:
        if len(positional) < len(self.arguments):
            raise RuntimeError(
                f"{self.name}() takes {len(positional)} positional argument(s) but "
                f"{len(args)} was/were given.  Declaration: {self}"
            )
        raise RuntimeError(
            f"{self.name}() expected at most {len(self.arguments)} argument(s) but received "
            f"{len(args)} argument(s). Declaration: {self}"
        )

    def _check(self, arg: Argument, position: int, value) -> None:
        if _accepts(arg.type, value):
            return
        if arg.type.base == "Tensor" and not arg.type.is_list:
            detail = f"Unable to cast {value!r} to Tensor"
        else:
            detail = (
                f"Unable to cast Python instance of type {type(value)} to C++ type '?' "
                "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)"
            )
        raise RuntimeError(
            f"{self.name}() Expected a value of type '{arg.type}' for argument '{arg.name}' "
            f"but instead found type '{type(value).__name__}'.\nPosition: {position}\n"
            f"Value: {value!r}\nDeclaration: {self}\nCast error details: {detail}"
        )


def _accepts(t: SchemaType, value) -> bool:
    if value is None:
        return t.optional
    if t.is_list:
        if isinstance(value, (list, tuple)):
            return all((v is None and t.elem_optional) or _accepts_one(t.base, v) for v in value)
        return t.size is not None and _accepts_one(t.base, value) and t.base != "Tensor"
    return _accepts_one(t.base, value)


def _accepts_one(base: str, value) -> bool:
    import tocha

    tensor = isinstance(value, tocha.Tensor)
    scalar_tensor = tensor and value.dim() == 0
    if base == "Tensor":
        return tensor
    if base in ("int", "SymInt"):
        return isinstance(value, numbers.Integral) or (
            scalar_tensor and not value.is_floating_point() and not value.is_complex()
        )
    if base == "float":
        return isinstance(value, numbers.Real) or scalar_tensor
    if base == "bool":
        return isinstance(value, builtins.bool) or scalar_tensor
    if base in ("Scalar", "complex"):
        return isinstance(value, numbers.Number) or scalar_tensor
    if base in ("str", "Dimname"):
        return isinstance(value, str)
    if base == "ScalarType":
        return isinstance(value, tocha.dtype)
    if base == "Device":
        return isinstance(value, (tocha.device, str, builtins.int))
    if base == "Layout":
        return isinstance(value, tocha.layout)
    if base == "MemoryFormat":
        return isinstance(value, tocha.memory_format)
    if base == "Generator":
        return isinstance(value, tocha.Generator)
    return True


# -- parsing --------------------------------------------------------------------------------
class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                start = len(text) - len(text[pos:].lstrip())
                self.error(f"expected a token but found '{text[start]}'", start, 1)
            kind = m.lastgroup
            start = m.start(kind)
            self.items.append((kind, m.group(kind), start))
            pos = m.end()
        self.i = 0

    def error(self, message: str, start: int, width: int):
        raise RuntimeError(f"{message} here:\n{self.text}\n{' ' * start}{'~' * width} <--- HERE\n")

    def peek(self) -> tuple[str, str, int]:
        if self.i < len(self.items):
            return self.items[self.i]
        return ("eof", "", len(self.text))

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        self.i += 1
        return tok

    def accept(self, value: str) -> bool:
        kind, text, _ = self.peek()
        if kind in ("punct", "arrow") and text == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            self._expected(value)

    def _expected(self, what: str):
        kind, text, start = self.peek()
        found = {"punct": text, "arrow": text, "eof": "eof"}.get(kind, kind)
        self.error(f"expected {what} but found '{found}'", start, max(len(text), 1))

    def ident(self) -> str:
        kind, text, _ = self.peek()
        if kind != "ident":
            self._expected("ident")
        self.i += 1
        return text


def parse_schema(text: str, *, allow_no_name: bool = False) -> FunctionSchema:
    """Parse ``name.overload(args) -> returns`` (the name omitted when `allow_no_name`)."""
    tok = _Tokens(text)
    name, overload = "", ""
    if not (allow_no_name and tok.peek()[1] == "("):
        full = tok.ident()
        name, _, overload = full.partition(".")
        kind, value, start = tok.peek()
        if kind == "eof":
            raise RuntimeError(
                "Tried to parse a function schema but only the operator name was given"
            )
        if value != "(":
            tok.error(f"expected eof but found '{kind}'", start, len(value))
    tok.expect("(")
    arguments: list[Argument] = []
    kwarg_only = False
    if not tok.accept(")"):
        while True:
            if tok.accept("*"):
                kwarg_only = True
            else:
                arguments.append(_argument(tok, kwarg_only, with_default=True))
            if tok.accept(")"):
                break
            tok.expect(",")
    if not tok.accept("->"):
        tok._expected("arrow")
    returns, returns_tuple = [], False
    if tok.accept("("):
        returns_tuple = True
        if not tok.accept(")"):
            while True:
                returns.append(_argument(tok, False, with_default=False))
                if tok.accept(")"):
                    break
                tok.expect(",")
        if len(returns) == 1:
            returns_tuple = True
    else:
        returns.append(_argument(tok, False, with_default=False))
        returns_tuple = False
    if tok.peek()[0] != "eof":
        kind, value, start = tok.peek()
        tok.error(f"expected eof but found '{kind}'", start, len(value))
    return FunctionSchema(name, overload, arguments, returns, returns_tuple)


def _argument(tok: _Tokens, kwarg_only: bool, with_default: bool) -> Argument:
    kind, base, start = tok.peek()
    if kind != "ident":
        tok._expected("ident")
    if base not in BASE_TYPES:
        raise RuntimeError(
            "\nunknown type specifier. Common valid schema types include Tensor, SymInt, int, "
            "float, bool, Scalar; for a full list, please see "
            "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func"
            f" :\n{tok.text}\n{' ' * start}{'~' * len(base)} <--- HERE\n"
        )
    tok.take()
    alias = None
    if tok.accept("("):
        alias = tok.ident()
        if tok.accept("!"):
            alias += "!"
        tok.expect(")")
    is_list, size, elem_optional, optional = False, None, False, False
    while True:
        if tok.accept("?"):
            if is_list:
                optional = True
            else:
                elem_optional = True
        elif tok.accept("["):
            kind, text, start = tok.peek()
            if kind == "number":
                size = int(text)
                tok.take()
            tok.expect("]")
            is_list = True
        else:
            break
    if elem_optional and not is_list:
        optional, elem_optional = True, False
    stype = SchemaType(base, is_list, size, elem_optional, optional)
    name = ""
    if tok.peek()[0] == "ident":
        name = tok.take()[1]
    arg = Argument(name, stype, kwarg_only=kwarg_only, alias=alias)
    if with_default and tok.accept("="):
        arg.default_text, arg.default = _default(tok, stype)
        arg.has_default = True
    return arg


def _default(tok: _Tokens, stype: SchemaType) -> tuple[str, Any]:
    kind, text, start = tok.peek()
    if tok.accept("["):
        if stype.base not in ("int", "SymInt", "float", "complex", "bool"):
            raise RuntimeError(
                "\nlists are only supported for float, int and complex types:\n"
                f"{tok.text}\n{' ' * start}~ <--- HERE\n"
            )
        items = []
        if not tok.accept("]"):
            while True:
                items.append(_scalar(tok, stype))
                if tok.accept("]"):
                    break
                tok.expect(",")
        return "[" + ", ".join(_show(v) for v in items) + "]", items
    value = _scalar(tok, stype)
    if stype.is_list and not isinstance(value, (list, type(None))):
        if stype.size is None:
            tok.error("expected [ but found 'number'", start, len(text))
        return text, [value] * stype.size
    return _show(value), value


def _scalar(tok: _Tokens, stype: SchemaType):
    import tocha

    kind, text, start = tok.take()
    if kind == "number":
        if stype.base == "float" or any(c in text for c in ".eE"):
            return builtins.float(text)
        return builtins.int(text)
    if kind == "string":
        text = text[1:-1].encode().decode("unicode_escape")
        return tocha.device(text) if stype.base == "Device" else text
    if kind == "ident":
        named = {"True": True, "False": False, "None": None}
        if text in named:
            return named[text]
        if stype.base == "ScalarType" and isinstance(getattr(tocha, text, None), tocha.dtype):
            return getattr(tocha, text)
        if stype.base == "Layout" and isinstance(getattr(tocha, text, None), tocha.layout):
            return getattr(tocha, text)
        if stype.base == "MemoryFormat":
            found = getattr(tocha, text, None)
            if isinstance(found, tocha.memory_format):
                return found
        if text in ("inf", "nan"):
            return builtins.float(text)
    tok.i -= 1
    tok._expected("number")


def _show(value) -> str:

    if isinstance(value, builtins.bool) or value is None:
        return str(value)
    if isinstance(value, builtins.float):
        if math.isinf(value) or math.isnan(value):
            return str(value)
        text = f"{value:.17g}"
        if not any(c in text for c in ".e"):
            text += "."
        return text
    if isinstance(value, str):
        return '"' + value + '"'
    return str(_enum_code(value))


_DTYPE_CODES = (
    "uint8 int8 int16 int32 int64 float16 float32 float64 complex32 complex64 complex128 "
    "bool qint8 quint8 qint32 bfloat16"
).split()
_LAYOUT_CODES = ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")
_FORMAT_CODES = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")


def _enum_code(value):
    """PyTorch's enum number of a dtype, layout or memory format default; else `value`."""
    import tocha

    for kind, names in (
        (tocha.dtype, _DTYPE_CODES),
        (tocha.layout, _LAYOUT_CODES),
        (tocha.memory_format, _FORMAT_CODES),
    ):
        if isinstance(value, kind):
            name = str(value).rsplit(".", 1)[-1]
            return names.index(name) if name in names else name
    return value
