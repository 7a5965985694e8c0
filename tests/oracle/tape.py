"""PyTorch as a recorded oracle: the `torch` fixture of the tests, with or without PyTorch.

A test takes `torch` and talks to it as to PyTorch. What the fixture hands out is a `Handle`:
a stand-in for one PyTorch object (the module, a tensor, a dtype, a bound method...). Every
question the test asks through a handle (an attribute, a call, an operator, ``len``, ``str``,
``np.asarray``...) is one *event* of the test's tape: which handle, what was asked, with what
arguments (as a fingerprint), and what PyTorch answered. An answer is a plain value (numbers,
strings, NumPy arrays, tuples and plain containers of them), a new handle, or an exception,
with the warnings raised on the way.

Modes (`Mode`), chosen per test by the conftest:

- record: PyTorch answers; the tape is kept and written to ``tests/oracle/answers``.
- check: PyTorch answers and each answer must agree with the recorded one (else the fixture
  is stale and the test fails, naming ``scripts/record_oracle.py``).
- replay: no PyTorch; the recorded answers are handed out in order. A test that asks another
  question than the recorded one fails: the test, or tocha's answers it passed on, changed.
- live: PyTorch itself, no tape (the tests whose answers cannot be recorded).

The test sees the same thing in every mode: answers go through the same encoding, so a NumPy
array from PyTorch is a copy in record mode as in replay. Calls PyTorch makes back into test
code (a hook, a closure given to gradcheck) run inside the recorded call and are not events.
"""

from __future__ import annotations

import builtins
import collections
import enum
import lzma
import operator
import pickle
import re
import sys
import types
import warnings
from pathlib import Path

import numpy as np

ANSWERS = Path(__file__).parent / "answers"
RERECORD = "rerun `python scripts/record_oracle.py` with PyTorch installed"
PLAIN_SCALARS = (
    type(None),
    type(NotImplemented),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    type(Ellipsis),
    range,
)
# Where a PyTorch error message goes on with the C++ stack that raised it.
CPP_TRACE = "\nException raised from "
# Questions whose answers belong to the object asked (an attribute, an item): a list or dict
# among them stays a handle, so that changing it changes PyTorch's.
OWNED_ANSWERS = {"get", "__getitem__", "__iter__", "__next__", "__enter__"}
# Methods whose answers are addresses: the same between handles of one run, not across runs.
ADDRESS_METHODS = {"data_ptr"}
NUMERIC_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "complex64": 1e-4, "float32": 1e-4}
# float64 and complex128: PyTorch computes some of them in float32 (an integer input's sinh
# written to a float64 out=), and its float32 kernels round by the CPU's SIMD path.
WIDE_TOLERANCE = 1e-6


class Mode(enum.Enum):
    RECORD = "record"
    CHECK = "check"
    REPLAY = "replay"


class StaleOracle(AssertionError):
    """The test asked PyTorch something the recording does not hold, or PyTorch now answers
    it differently."""


class Ref:
    """A handle in a recorded answer: its number, and whether it stands for a module (whose
    attributes are asked once per test: modules do not change under a test)."""

    __slots__ = ("number", "module")

    def __init__(self, number: int, module: bool) -> None:
        self.number, self.module = number, module

    def __reduce__(self):
        return Ref, (self.number, self.module)

    def __eq__(self, other) -> bool:
        return isinstance(other, Ref) and (self.number, self.module) == (other.number, other.module)

    def __repr__(self) -> str:
        return f"#{self.number}"


class NamedAnswer(tuple):
    """A recorded named tuple: of a test's own class (`kind` is its module and qualified
    name, looked up when the test receives it), or of PyTorch's ``torch.return_types``
    (`kind` is its name; replayed as a tuple whose fields are also attributes)."""

    def __new__(cls, kind, fields: tuple, values):
        answer = super().__new__(cls, values)
        answer.kind, answer.fields = kind, fields
        return answer

    def rebuild(self, values):
        """The answer handed to the test: the test's own class, or a `NamedAnswer`."""
        if isinstance(self.kind, tuple):
            module, qualname = self.kind
            cls = sys.modules[module]
            for name in qualname.split("."):
                cls = getattr(cls, name)
            return cls._make(values)
        return NamedAnswer(self.kind, self.fields, values)

    def __getattr__(self, name: str):
        fields = self.__dict__.get("fields", ())
        if name in fields:
            return self[fields.index(name)]
        raise AttributeError(f"'{self.__dict__.get('kind')}' object has no attribute '{name}'")

    def __reduce__(self):
        return NamedAnswer, (self.kind, self.fields, tuple(self))

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={v!r}" for f, v in zip(self.fields, self))
        return f"{self.kind}({inner})"


def named_fields(value) -> tuple | None:
    """The field names of a named tuple or a struct sequence, or None for other values."""
    if not isinstance(value, tuple) or type(value) is tuple:
        return None
    fields = getattr(type(value), "_fields", None) or getattr(type(value), "__match_args__", None)
    return tuple(fields) if fields and len(fields) == len(value) else None


class Raised:
    """A recorded exception: its class (module, name, the builtin exception it derives from)
    and its message and arguments."""

    __slots__ = ("module", "name", "base", "message", "args")

    def __init__(self, exc: BaseException) -> None:
        cls = type(exc)
        self.module, self.name = cls.__module__, cls.__qualname__
        self.base = builtin_base(cls)
        self.message = str(exc)
        self.args = exc.args if is_plain(exc.args) else (self.message,)
        trace = self.message.find(CPP_TRACE)
        if trace >= 0:  # PyTorch's C++ stack, with the paths of this installation: dropped
            self.message = self.message[:trace]
            self.args = (self.message,)

    def __reduce__(self):
        state = (self.module, self.name, self.base, self.message, self.args)
        return _raised_from_state, (state,)

    def __eq__(self, other) -> bool:
        return isinstance(other, Raised) and (
            self.module,
            self.name,
            _steady(self.message),
        ) == (
            other.module,
            other.name,
            _steady(other.message),
        )

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}({self.message!r})"

    def exception(self) -> BaseException:
        """An exception of the recorded class, or of a stand-in class of the same name and
        builtin base when the class is PyTorch's own."""
        cls = exception_class(self.module, self.name, self.base)
        try:
            exc = cls(*self.args)
        except Exception:
            exc = cls(self.message)
        return exc


def _raised_from_state(state):
    raised = Raised.__new__(Raised)
    raised.module, raised.name, raised.base, raised.message, raised.args = state
    return raised


def builtin_base(cls: type) -> str:
    """The name of the nearest builtin class among `cls` and its bases."""
    return next(c.__name__ for c in cls.__mro__ if c.__module__ == "builtins")


_STAND_INS: dict[tuple[str, str], type] = {}


def exception_class(module: str, name: str, base: str) -> type:
    """The builtin class `name`, or one stand-in class per (module, name) deriving from the
    builtin `base` (a warning or exception class of PyTorch's own)."""
    if module == "builtins":
        return getattr(builtins, name)
    key = (module, name)
    if key not in _STAND_INS:
        _STAND_INS[key] = type(
            name.rpartition(".")[2], (getattr(builtins, base),), {"__module__": module}
        )
    return _STAND_INS[key]


def _sorted_set(match: re.Match) -> str:
    return "{" + ", ".join(sorted(match.group(1).split(", "))) + "}"


def _steady(text: str) -> str:
    """`text` without what changes from one run or installation to the next: object
    addresses, where the packages are installed, pytest's temporary folders, and the order
    in which a set of strings was printed."""
    text = re.sub(r"/[^\s'\"]*?/site-packages/", "<site-packages>/", text)
    text = re.sub(r"/[^\s'\"]*?/pytest-of-[^/]+/pytest-\d+/", "<tmp_path>/", text)
    text = re.sub(r"\{('[^']*'(?:, '[^']*')+)\}", _sorted_set, text)  # a set's order varies
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", text)


def is_plain(value) -> bool:
    """Whether `value` is recorded as itself: builtin scalars, NumPy arrays, scalars and
    dtypes, builtin types, and tuples, lists, dicts and sets of plain values."""
    kind = type(value)
    if kind in PLAIN_SCALARS or kind is slice:
        return kind is not slice or is_plain((value.start, value.stop, value.step))
    if kind.__module__ == "numpy" or isinstance(value, np.ndarray) and kind is np.ndarray:
        return True
    if isinstance(value, type) and value.__module__ in ("builtins", "numpy"):
        return True
    if kind in (tuple, list, set, frozenset):
        return all(is_plain(v) for v in value)
    if kind is dict:
        return all(is_plain(k) and is_plain(v) for k, v in value.items())
    return False


def fingerprint(value) -> str:
    """A short text standing for an argument: what a test passes to PyTorch must be the same
    at replay as at recording (arrays by shape and dtype, floats to six digits)."""
    if isinstance(value, Handle):
        return f"#{object.__getattribute__(value, '_number')}"
    kind = type(value)
    if kind is float:
        return format(value, ".6g")
    if kind is complex:
        return f"({value.real:.6g}{value.imag:+.6g}j)"
    if kind is str:
        return repr(_steady(value))
    if kind in PLAIN_SCALARS:
        return repr(value)
    if isinstance(value, np.ndarray):
        return f"array{value.shape}{value.dtype}"
    if isinstance(value, np.generic):
        return f"{value.dtype}:{fingerprint(value.item())}"
    if isinstance(value, (tuple, list)):
        inner = ",".join(fingerprint(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if kind in (set, frozenset):
        return "{" + ",".join(sorted(fingerprint(v) for v in value)) + "}"
    if kind in (dict, collections.OrderedDict):
        return "{" + ",".join(f"{fingerprint(k)}:{fingerprint(v)}" for k, v in value.items()) + "}"
    if kind is slice:
        return (
            f"slice({fingerprint(value.start)},{fingerprint(value.stop)},{fingerprint(value.step)})"
        )
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{kind.__module__}.{kind.__qualname__}{tuple(value.shape)}{value.dtype}"
    if isinstance(value, BaseException):
        return f"{kind.__qualname__}()"
    if isinstance(value, type):
        return f"type:{value.__qualname__}"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"fn:{value.__qualname__}"
    return kind.__qualname__


def agrees(recorded, answer) -> bool:
    """Whether PyTorch's `answer` now is the recorded one, with float tolerance by dtype."""
    if isinstance(recorded, np.ndarray) or isinstance(answer, np.ndarray):
        if not (isinstance(recorded, np.ndarray) and isinstance(answer, np.ndarray)):
            return False
        if recorded.dtype != answer.dtype or recorded.shape != answer.shape:
            return False
        if recorded.dtype.kind in "fc":
            tol = NUMERIC_TOLERANCE.get(recorded.dtype.name, WIDE_TOLERANCE)
            wide = np.complex128 if recorded.dtype.kind == "c" else np.float64
            return bool(
                np.allclose(
                    recorded.astype(wide), answer.astype(wide), rtol=tol, atol=tol, equal_nan=True
                )
            )
        if recorded.dtype.kind in "biu":
            return bool(np.array_equal(recorded, answer))
        return recorded.tobytes() == answer.tobytes()
    if type(recorded) is not type(answer):
        return False
    if isinstance(recorded, (float, complex, np.floating, np.complexfloating)):
        return bool(
            recorded == answer
            or (recorded != recorded and answer != answer)
            or abs(recorded - answer) <= 1e-5 * max(1.0, abs(recorded))
        )
    if isinstance(recorded, (tuple, list)):
        return len(recorded) == len(answer) and all(map(agrees, recorded, answer))
    if isinstance(recorded, dict):
        return list(recorded) == list(answer) and all(
            agrees(recorded[k], answer[k]) for k in recorded
        )
    if isinstance(recorded, str):
        return _steady(recorded) == _steady(answer)
    return bool(recorded == answer)


class Tape:
    """One test's conversation with PyTorch: the handles it was given and the events."""

    def __init__(self, mode: Mode, nodeid: str, events: list | None = None, torch=None) -> None:
        self.mode, self.nodeid = mode, nodeid
        self.events = [] if events is None else events
        self.position = 0
        self.handles: list[Handle] = []
        self.reals: list = []  # record and check: the PyTorch object behind each handle
        self.numbers: dict[int, int] = {}  # id(real object) -> handle number
        self.module_attributes: dict[tuple[int, str], object] = {}
        self.names: dict[int, str] = {}  # handle number -> the attribute it was read as
        self.inside = 0  # > 0 while PyTorch runs a recorded call (and maybe calls back)
        self.root = self._new_handle(torch, module=True)

    def _new_handle(self, real, module: bool) -> Handle:
        number = len(self.handles)
        handle = Handle.__new__(Handle)
        object.__setattr__(handle, "_number", number)
        object.__setattr__(handle, "_tape", self)
        object.__setattr__(handle, "_module", module)
        self.handles.append(handle)
        if self.mode is not Mode.REPLAY:
            self.reals.append(real)
            self.numbers[id(real)] = number
        return handle

    def unwrap(self, value):
        """`value` with each handle replaced by its PyTorch object (record and check)."""
        if isinstance(value, Handle):
            return self.reals[object.__getattribute__(value, "_number")]
        kind = type(value)
        if kind in (tuple, list, set, frozenset):
            return kind(self.unwrap(v) for v in value)
        if isinstance(value, dict) and kind in (dict, collections.OrderedDict):
            return kind((self.unwrap(k), self.unwrap(v)) for k, v in value.items())
        if isinstance(value, NamedAnswer):
            return tuple(self.unwrap(v) for v in value)
        if named_fields(value) is not None:
            values = [self.unwrap(v) for v in value]
            return kind._make(values) if hasattr(kind, "_make") else kind(values)
        if kind in (type(iter([])), type(iter(())), types.GeneratorType):
            return iter([self.unwrap(v) for v in value])
        if kind is slice:
            return slice(self.unwrap(value.start), self.unwrap(value.stop), self.unwrap(value.step))
        return value

    def encode(self, value, fresh: bool = True):
        """PyTorch's answer as recorded: plain values as themselves (arrays copied), tuples
        and named tuples element by element, the lists and dicts a call made (`fresh`) item
        by item, anything else as a `Ref` to a handle (so a list PyTorch keeps, as
        ``optimizer.param_groups``, is changed in place through its handle)."""
        if is_plain(value):
            return _copy_plain(value)
        kind = type(value)
        if kind is tuple:
            return tuple(self.encode(v, fresh) for v in value)
        if fresh and kind is list:
            return [self.encode(v, fresh) for v in value]
        if fresh and kind in (dict, collections.OrderedDict):
            return kind((self.encode(k, fresh), self.encode(v, fresh)) for k, v in value.items())
        fields = named_fields(value)
        if fields is not None and not kind.__module__.startswith("torch"):
            where = (kind.__module__, kind.__qualname__)
            return NamedAnswer(where, fields, [self.encode(v, fresh) for v in value])
        if fields is not None and kind.__module__ == "torch.return_types":
            name = f"{kind.__module__}.{kind.__qualname__}"
            return NamedAnswer(name, fields, [self.encode(v, fresh) for v in value])
        number = self.numbers.get(id(value))
        if number is None:
            number = object.__getattribute__(
                self._new_handle(value, isinstance(value, types.ModuleType)), "_number"
            )
        return Ref(number, object.__getattribute__(self.handles[number], "_module"))

    def decode(self, value):
        """A recorded answer as the test receives it: `Ref`s become handles."""
        if isinstance(value, Ref):
            while len(self.handles) <= value.number:
                self._new_handle(None, value.module)
            return self.handles[value.number]
        kind = type(value)
        if kind in (tuple, list):
            return kind(self.decode(v) for v in value)
        if kind in (dict, collections.OrderedDict):
            return kind((self.decode(k), self.decode(v)) for k, v in value.items())
        if isinstance(value, NamedAnswer):
            return value.rebuild([self.decode(v) for v in value])
        return _copy_plain(value)

    def ask(self, handle: Handle, op: str, detail_args: tuple, perform):
        """One question to PyTorch: `perform(real, *unwrapped args)` in record and check
        mode, the recorded answer in replay mode."""
        number = object.__getattribute__(handle, "_number")
        if self.inside:  # PyTorch calls test code, which asks PyTorch: not an event
            return perform(self.reals[number], *self.unwrap(detail_args))
        if op == "get" and object.__getattribute__(handle, "_module"):
            key = (number, detail_args[0])
            if key in self.module_attributes:
                return self.module_attributes[key]
        detail = fingerprint(detail_args)
        if self.mode is Mode.REPLAY:
            outcome, caught = self._next_event(number, op, detail)[3:]
        else:
            outcome, caught = self._perform(perform, number, op, detail_args)
            if self.mode is Mode.RECORD:
                self.events.append((number, op, detail, outcome, caught))
            else:
                self._compare(number, op, detail, outcome, caught)
        for module, name, base, message in caught:  # attributed to PyTorch, as it warned
            category = exception_class(module, name, base)
            warnings.warn_explicit(message, category, "torch", 0, module="torch", registry={})
        if isinstance(outcome, Raised):
            raise outcome.exception()
        answer = self.decode(outcome)
        if op == "get":
            if object.__getattribute__(handle, "_module"):
                self.module_attributes[(number, detail_args[0])] = answer
            if isinstance(answer, Handle):
                self.names[object.__getattribute__(answer, "_number")] = detail_args[0]
        return answer

    def _perform(self, perform, number: int, op: str, detail_args: tuple):
        self.inside += 1
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    answer = perform(self.reals[number], *self.unwrap(detail_args))
                    outcome = self.encode(answer, fresh=op not in OWNED_ANSWERS)
                except Exception as exc:
                    outcome = Raised(exc)
        finally:
            self.inside -= 1
        return outcome, [_warning_spec(w) for w in caught]

    def _next_event(self, number: int, op: str, detail: str):
        if self.position >= len(self.events):
            raise StaleOracle(
                f"{self.nodeid}: the test asks PyTorch more than was recorded "
                f"(handle #{number}, {op} {detail}): {RERECORD}"
            )
        event = self.events[self.position]
        self.position += 1
        if event[:3] != (number, op, detail):
            raise StaleOracle(
                f"{self.nodeid}: question {self.position} to PyTorch was recorded as "
                f"#{event[0]} {event[1]} {event[2]}, the test now asks #{number} {op} {detail}: "
                f"{RERECORD}"
            )
        return event

    def _compare(self, number, op, detail, outcome, caught) -> None:
        event = self._next_event(number, op, detail)
        if op == "call" and self.names.get(number) in ADDRESS_METHODS:
            return
        if not agrees(event[3], outcome) or [w[:2] for w in event[4]] != [w[:2] for w in caught]:
            raise StaleOracle(
                f"{self.nodeid}: PyTorch answers #{number} {op} {detail} with {outcome!r}"
                f"{' and warnings ' + str(caught) if caught else ''}, the recording holds "
                f"{event[3]!r}{' and warnings ' + str(event[4]) if event[4] else ''}: {RERECORD}"
            )

    def finish(self) -> None:
        """At the end of a passing test (check and replay): every recorded event was asked."""
        if self.mode is not Mode.RECORD and self.position != len(self.events):
            raise StaleOracle(
                f"{self.nodeid}: the test asked PyTorch {self.position} questions, "
                f"{len(self.events)} were recorded: {RERECORD}"
            )

    def mro_entries(self, handle: Handle) -> tuple:
        """A test class deriving from a PyTorch class: from the class itself when PyTorch
        runs, from `object` at replay (its instances then only travel into recorded calls)."""
        if self.mode is Mode.REPLAY:
            return (object,)
        return (self.reals[object.__getattribute__(handle, "_number")],)


def _copy_plain(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) in (list, dict, set):
        return pickle.loads(pickle.dumps(value))
    return value


def _warning_spec(message: warnings.WarningMessage) -> tuple:
    cls = message.category
    return (cls.__module__, cls.__qualname__, builtin_base(cls), str(message.message))


def _type_method(name: str):
    """`op(real, *args)` through `real`'s type, as Python's operators do, with
    NotImplemented where the type lacks the method."""

    def perform(real, *args):
        method = getattr(type(real), name, None)
        if method is None:
            return NotImplemented
        return method(real, *args)

    return perform


def _protocol(name: str):
    """What a builtin (``len``, ``iter``, ``str``, ...) does on the PyTorch object."""
    calls = {
        "__len__": len,
        "__iter__": iter,
        "__next__": next,
        "__reversed__": reversed,
        "__bool__": bool,
        "__int__": int,
        "__float__": float,
        "__complex__": complex,
        "__index__": operator.index,
        "__str__": str,
        "__repr__": repr,
        "__format__": format,
        "__dir__": dir,
        "__round__": round,
        "__getitem__": operator.getitem,
        "__setitem__": operator.setitem,
        "__delitem__": operator.delitem,
        "__contains__": operator.contains,
        "__instancecheck__": lambda real, obj: isinstance(obj, real),
        "__subclasscheck__": lambda real, cls: issubclass(cls, real),
    }
    return calls[name]


class Handle:
    """A stand-in for one PyTorch object: every question asked of it is one tape event."""

    __slots__ = ("_number", "_tape", "_module")

    def __getattr__(self, name: str):
        if name in Handle.__slots__:  # a handle made without its tape (copied by PyTorch)
            raise AttributeError(name)
        return self._tape.ask(self, "get", (name,), getattr)

    def __setattr__(self, name: str, value) -> None:
        self._tape.ask(self, "set", (name, value), setattr)

    def __delattr__(self, name: str) -> None:
        self._tape.ask(self, "del", (name,), delattr)

    def __call__(self, *args, **kwargs):
        return self._tape.ask(self, "call", (args, kwargs), lambda real, a, k: real(*a, **k))

    def __hash__(self) -> int:
        return hash(("tocha-oracle-handle", self._number))

    def __mro_entries__(self, bases):
        return self._tape.mro_entries(self)

    def __array__(self, dtype=None, copy=None):
        return self._tape.ask(
            self, "__array__", (dtype,), lambda real, d: np.asarray(real, dtype=d)
        )


def _dunder(name: str, perform):
    def method(self, *args):
        return self._tape.ask(self, name, args, perform)

    method.__name__ = name
    return method


for _name in (
    "__len__ __iter__ __next__ __reversed__ __bool__ __int__ __float__ __complex__ __index__ "
    "__str__ __repr__ __format__ __dir__ __round__ __getitem__ __setitem__ __delitem__ "
    "__contains__ __instancecheck__ __subclasscheck__"
).split():
    setattr(Handle, _name, _dunder(_name, _protocol(_name)))

for _name in (
    "eq ne lt le gt ge add sub mul matmul truediv floordiv mod pow lshift rshift and xor or "
    "neg pos abs invert trunc floor ceil enter exit"
).split():
    setattr(Handle, f"__{_name}__", _dunder(f"__{_name}__", _type_method(f"__{_name}__")))
for _name in "add sub mul matmul truediv floordiv mod pow lshift rshift and xor or".split():
    for _form in ("r", "i"):
        setattr(
            Handle,
            f"__{_form}{_name}__",
            _dunder(f"__{_form}{_name}__", _type_method(f"__{_form}{_name}__")),
        )


def answers_file(test_file: str) -> Path:
    """Where the recorded answers of a test file live: tests/core/test_ops.py ->
    tests/oracle/answers/core/test_ops.pkl.xz."""
    relative = Path(test_file).with_suffix(".pkl.xz")
    parts = relative.parts[1:] if relative.parts[0] == "tests" else relative.parts
    return ANSWERS.joinpath(*parts)


def load_answers(test_file: str) -> dict:
    """nodeid -> recorded events, or the reason the test's answers are not recorded."""
    path = answers_file(test_file)
    if not path.exists():
        return {}
    with lzma.open(path, "rb") as stream:
        return pickle.load(stream)


def save_answers(test_file: str, answers: dict) -> None:
    path = answers_file(test_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(path, "wb", preset=9) as stream:
        pickle.dump(dict(sorted(answers.items())), stream, protocol=5)
