"""A distribution that is not installed is named, however its module is asked for: ``import
tocha.nn``, ``import tocha.nn as nn``, ``from tocha.nn import functional``, ``from tocha import
nn``, ``tocha.nn``... all raise a ModuleNotFoundError naming the distribution and how to install
it, from an index and from a checkout; so does a ``cuda`` tensor without tocha-cuda (a
RuntimeError, as before).

Each check runs in a fresh interpreter in which the other distributions are hidden: every finder
on `sys.meta_path` is wrapped, before tocha is imported, so that it does not find their modules
(as if they were not installed, whatever this environment has installed).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import tocha
from tocha import _missing

# (module, distribution, its folder under packages/)
OTHERS = [
    ("tocha.autograd", "tocha-autograd", "autograd"),
    ("tocha.nn", "tocha-nn", "nn"),
    ("tocha.optim", "tocha-optim", "optim"),
    ("tocha.multiprocessing", "tocha-mp", "mp"),
    ("tocha.utils", "tocha-utils", "utils"),
    ("tocha.distributed", "tocha-distributed", "distributed"),
]
HIDDEN = [module for module, _, _ in OTHERS] + ["tocha_cuda"]

# Runs first in each interpreter: hides the modules of HIDDEN from every finder there is.
PRELUDE = f"""
import json, sys

HIDDEN = {HIDDEN!r}


class Hide:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if any(name == h or name.startswith(h + ".") for h in HIDDEN):
            return None
        find_spec = getattr(self.finder, "find_spec", None)
        return None if find_spec is None else find_spec(name, path, target)

    def invalidate_caches(self):
        getattr(self.finder, "invalidate_caches", lambda: None)()


sys.meta_path[:] = [Hide(finder) for finder in sys.meta_path]
import tocha


def attempt(code):
    try:
        exec(code, {{"tocha": tocha}})
    except Exception as exc:
        return [type(exc).__name__, isinstance(exc, ImportError), getattr(exc, "name", None),
                str(exc)]
    return None
"""


def run_hidden(body: str) -> str:
    """Run PRELUDE then `body` in a fresh interpreter; its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + body], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def message(module: str, distribution: str, folder: str) -> str:
    return (
        f"{module} comes from the distribution {distribution}, which is not installed: "
        f"pip install {distribution} (from a checkout: pip install -e packages/{folder})"
    )


NN = ("tocha.nn", "tocha-nn", "nn")
UTILS = ("tocha.utils", "tocha-utils", "utils")
# (statement, (the module reported missing, its distribution, its folder))
STATEMENTS = [
    ("import tocha.nn", NN),
    ("import tocha.nn as nn", NN),
    ("import tocha.nn.functional as F", NN),
    ("from tocha.nn import functional", NN),
    ("from tocha.nn.functional import relu", NN),
    ("from tocha import nn", NN),
    ("tocha.nn", NN),
    ("getattr(tocha, 'nn')", NN),
    ("__import__('importlib').import_module('tocha.nn')", NN),
    ("from tocha.utils.data import DataLoader", UTILS),
    ("import tocha.utils.data", UTILS),
    ("tocha.utils.data", UTILS),
] + [
    (form.format(module), (module, dist, folder))
    for module, dist, folder in OTHERS
    for form in ("import {}", "{}")
]


@pytest.fixture(scope="module")
def outcomes():
    """What each statement of STATEMENTS raised, with every other distribution hidden."""
    statements = [statement for statement, _ in STATEMENTS]
    out = run_hidden(f"print(json.dumps([attempt(code) for code in {statements!r}]))\n")
    return dict(zip(statements, json.loads(out)))


@pytest.mark.parametrize(
    "statement, missing", STATEMENTS, ids=[statement for statement, _ in STATEMENTS]
)
def test_every_import_form_names_the_distribution(outcomes, statement, missing):
    module = missing[0]
    assert outcomes[statement] == ["ModuleNotFoundError", True, module, message(*missing)]


def test_the_messages_come_from_the_one_table():
    for module, dist, folder in OTHERS:
        assert tocha._SUBPACKAGES[module.partition(".")[2]] == dist
        assert _missing.FOLDERS[dist] == folder
        error = _missing.missing_module(module)
        assert isinstance(error, ModuleNotFoundError) and error.name == module
        assert str(error) == message(module, dist, folder)
    assert _missing.missing_module("tocha.cuda") is None  # tocha-core's own
    assert _missing.missing_module("tocha.nn.functional") is None  # the parent is asked
    assert _missing.missing_module("numpy") is None
    assert _missing.install_hint("tocha-fake") == "pip install tocha-fake"


def test_probes_still_answer_none_and_other_names_keep_python_s_message():
    out = run_hidden(
        "import importlib.util\n"
        "print(json.dumps([\n"
        "    importlib.util.find_spec('tocha.nn') is None,\n"
        "    importlib.util.find_spec('tocha.autograd') is None,\n"
        "    attempt('import tocha.no_such_module'),\n"
        "    attempt('import tocha_cuda'),\n"
        "    type(sys.meta_path[-1]).__name__,\n"
        "]))\n"
    )
    nn_none, autograd_none, unknown, cuda, last = json.loads(out)
    assert nn_none and autograd_none
    assert unknown == [
        "ModuleNotFoundError",
        True,
        "tocha.no_such_module",
        "No module named 'tocha.no_such_module'",
    ]
    assert cuda[:3] == ["ModuleNotFoundError", True, "tocha_cuda"]
    assert last == "MissingDistributionFinder"


def test_the_finder_is_last_and_installed_once():
    finders = [f for f in sys.meta_path if isinstance(f, _missing.MissingDistributionFinder)]
    assert len(finders) == 1
    _missing.install_finder()
    assert [f for f in sys.meta_path if isinstance(f, _missing.MissingDistributionFinder)] == (
        finders
    )


def test_a_finder_added_later_still_finds_its_module():
    out = run_hidden(
        "import importlib.machinery, types\n"
        "class Loader:\n"
        "    def create_module(self, spec):\n"
        "        return None\n"
        "    def exec_module(self, module):\n"
        "        module.ANSWER = 42\n"
        "class Late:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tocha.nn':\n"
        "            return importlib.machinery.ModuleSpec(name, Loader())\n"
        "        return None\n"
        "sys.meta_path.append(Late())\n"
        "import tocha.nn\n"
        "print(tocha.nn.ANSWER)\n"
    )
    assert out.split() == ["42"]


def test_cuda_without_tocha_cuda_names_the_distribution():
    # The registry reads entry points, not imports: drop its cuda entry, if tocha-cuda is here.
    out = run_hidden(
        "from tocha import _backend\n"
        "_backend._discover()\n"
        "_backend._entries.pop('cuda', None)\n"
        "print(json.dumps([\n"
        "    attempt('tocha.zeros(2, device=\"cuda\")'),\n"
        "    attempt('tocha.ones(2).to(\"cuda\")'),\n"
        "    attempt('tocha.cuda.synchronize()'),\n"
        "]))\n"
    )
    hint = "pip install tocha-cuda (from a checkout: pip install -e packages/cuda)"
    zeros, to, synchronize = json.loads(out)
    for outcome in (zeros, to):
        assert outcome[:2] == ["RuntimeError", False]
        assert outcome[3].startswith("no backend is installed for device type 'cuda'")
        assert outcome[3].endswith(
            "it comes from the distribution tocha-cuda, which is not installed: " + hint
        )
    assert synchronize[:2] == ["RuntimeError", False]
    assert synchronize[3].endswith(hint)


def test_an_unknown_device_type_still_says_how_backends_register():
    with pytest.raises(RuntimeError, match="no backend is installed for device type 'nosuch'") as e:
        tocha.zeros(2, device="nosuch")
    assert "'tocha.backends' entry-point group" in str(e.value)
    assert "pip install" not in str(e.value)


def test_requires_grad_and_the_torch_alias_name_the_distribution():
    out = run_hidden(
        "import tocha.compat\n"
        "tocha.compat.alias_torch()\n"
        "print(json.dumps([\n"
        "    attempt('tocha.zeros(2, requires_grad=True)'),\n"
        "    attempt('import torch.nn as nn'),\n"
        "    attempt('from torch.utils.data import DataLoader'),\n"
        "]))\n"
    )
    grad, torch_nn, torch_utils = json.loads(out)
    assert grad[0] == "ImportError" and grad[3].endswith(
        "needs tocha-autograd, which is not installed: pip install tocha-autograd "
        "(from a checkout: pip install -e packages/autograd)"
    )
    assert torch_nn == ["ModuleNotFoundError", True, "torch.nn", message("torch.nn", *NN[1:])]
    assert torch_utils[:3] == ["ModuleNotFoundError", True, "torch.utils"]
    assert torch_utils[3] == message("torch.utils", *UTILS[1:])
