"""``__torch_function__`` on Tensor subclasses and tensor-like classes, as PyTorch's
"Extending torch" documents it: the functions, methods, operators and property reads each
reports, results of a subclass kept in it, opting out, and the errors when every handler
declines. Each case runs in a fresh interpreter: the first such subclass turns dispatch on
for the rest of the process. The expected lines are PyTorch 2.13's output."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

LOGGING = """
import torch

class LoggingTensor(torch.Tensor):
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        LoggingTensor.seen.append(getattr(func, "__name__", repr(func)))
        return super().__torch_function__(func, types, args, kwargs or {})

x = torch.ones(3).as_subclass(LoggingTensor)
y = torch.ones(3, 3).as_subclass(LoggingTensor)
calls = [
    ("add", lambda: x + 1), ("radd", lambda: 1 + x), ("rsub", lambda: 1 - x),
    ("rtruediv", lambda: 2 / x), ("getitem", lambda: x[0]), ("neg", lambda: -x),
    ("eq", lambda: x == 1), ("matmul", lambda: y @ y), ("pow", lambda: x ** 2),
    ("T", lambda: y.T), ("shape", lambda: x.shape), ("iadd", lambda: x.__iadd__(0)),
    ("sum", lambda: x.sum()), ("sin", lambda: x.sin()),
    ("cat", lambda: torch.cat([x, x])),
    ("dtype", lambda: x.dtype), ("data", lambda: x.data), ("item", lambda: x[0].item()),
]
for name, call in calls:
    LoggingTensor.seen.clear()
    result = call()
    print(name, LoggingTensor.seen, type(result).__name__)
class Plain(torch.Tensor):
    pass
p = torch.ones(2).as_subclass(Plain)
print(type(p + 1).__name__, type(p.sum()).__name__, type(torch.ones(2) + p).__name__)
print(type(torch.nn.Parameter(torch.ones(2)) * 2).__name__)
with torch._C.DisableTorchFunctionSubclass():
    print(type(x + 1).__name__)
"""

LOGGING_LINES = [
    "add ['add'] LoggingTensor",
    "radd ['add'] LoggingTensor",
    "rsub ['__rsub__'] LoggingTensor",
    "rtruediv ['__rdiv__'] LoggingTensor",
    "getitem ['__getitem__'] LoggingTensor",
    "neg ['neg'] LoggingTensor",
    "eq ['__eq__'] LoggingTensor",
    "matmul ['matmul'] LoggingTensor",
    "pow ['pow'] LoggingTensor",
    "T ['__get__'] LoggingTensor",
    "shape ['__get__'] Size",
    "iadd ['add_'] LoggingTensor",
    "sum ['sum'] LoggingTensor",
    "sin ['sin'] LoggingTensor",
    "cat ['cat'] LoggingTensor",
    "dtype ['__get__'] dtype",
    "data ['__get__'] LoggingTensor",
    "item ['__getitem__', 'item'] float",
    "Plain Plain Plain",
    "Tensor",
    "Tensor",
]

DECLINING = """
import torch

class Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented

class Declines(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented

for call in [
    lambda: torch.sum(Duck()),
    lambda: torch.ones(1).as_subclass(Declines).sum(),
    lambda: torch.add(Duck(), torch.ones(1).as_subclass(Declines)),
]:
    try:
        call()
    except TypeError as exc:
        print(repr(str(exc)))
parameter = torch.nn.Parameter(torch.ones(1))
print(
    torch.overrides.is_tensor_like(parameter),
    torch.overrides.has_torch_function((parameter,)),
    torch.overrides.has_torch_function((torch.ones(1).as_subclass(Declines),)),
)
"""

DECLINING_LINES = [
    "\"Multiple dispatch failed for 'torch.sum'; all __torch_function__ handlers returned "
    "NotImplemented:\\n\\n  - tensor subclass <class '__main__.Duck'>\\n\\nFor more information, "
    'try re-running with TORCH_LOGS=not_implemented"',
    "\"Multiple dispatch failed for 'torch.Tensor.sum'; all __torch_function__ handlers "
    "returned NotImplemented:\\n\\n  - tensor subclass <class '__main__.Declines'>\\n\\nFor more "
    'information, try re-running with TORCH_LOGS=not_implemented"',
    "\"Multiple dispatch failed for 'torch.add'; all __torch_function__ handlers returned "
    "NotImplemented:\\n\\n  - tensor subclass <class '__main__.Duck'>\\n  - tensor subclass "
    "<class '__main__.Declines'>\\n\\nFor more information, try re-running with "
    'TORCH_LOGS=not_implemented"',
    "True False True",
]

SCALAR = """
import torch

HANDLED = {}

class ScalarTensor:
    def __init__(self, n, value):
        self._n, self._value = n, value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in HANDLED:
            return NotImplemented
        return HANDLED[func](*args, **(kwargs or {}))

HANDLED[torch.mean] = lambda input: float(input._value) / input._n
print(torch.mean(ScalarTensor(5, 2)))
"""


MAKE_SUBCLASS = """
import torch

class Meta(torch.Tensor):
    pass

base = torch.ones(3, requires_grad=True)
made = torch.Tensor._make_subclass(Meta, base, True)
print(type(made).__name__, made.requires_grad, made.grad_fn is None)
with torch.no_grad():
    made[0] = 5.0
print(base[0].item())
"""


def _run(code: str, tmp_path) -> list[str]:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(code))
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.splitlines()


def test_a_logging_subclass_sees_each_call_as_torch_reports_it(tmp_path):
    assert _run(LOGGING, tmp_path) == LOGGING_LINES


def test_declining_handlers_raise_torch_errors(tmp_path):
    assert _run(DECLINING, tmp_path) == DECLINING_LINES


def test_the_documented_scalar_tensor_example(tmp_path):
    assert _run(SCALAR, tmp_path) == ["0.4"]


def test_plain_tensors_keep_plain_functions():
    """tocha's own packages define only subclasses that opt out (nothing is armed), and a
    subclass that takes part gets its wrappers on itself: Tensor's methods and properties
    stay the same objects (the tracers know them by identity)."""
    code = (
        "import tocha, tocha.nn, tocha.sparse, tocha.func, tocha.distributions, tocha.optim\n"
        "from tocha._subclass_dispatch import STATE\n"
        "before = dict(vars(tocha.Tensor)); armed = STATE.armed\n"
        "class Sub(tocha.Tensor): pass\n"
        "same = all(vars(tocha.Tensor)[k] is v for k, v in before.items())\n"
        "print(armed, STATE.armed, same, 'add' in vars(Sub))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True", "True"]


@pytest.mark.parametrize("code", [LOGGING, DECLINING, SCALAR, MAKE_SUBCLASS])
def test_programs_print_what_torch_prints(tmp_path, code):
    torch = pytest.importorskip("torch")
    del torch
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(code))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = {
        LOGGING: LOGGING_LINES,
        DECLINING: DECLINING_LINES,
        SCALAR: ["0.4"],
        MAKE_SUBCLASS: ["Meta True True", "5.0"],
    }[code]
    assert proc.stdout.splitlines() == expected


def test_make_subclass_shares_memory_without_history(tmp_path):
    assert _run(MAKE_SUBCLASS, tmp_path) == ["Meta True True", "5.0"]
