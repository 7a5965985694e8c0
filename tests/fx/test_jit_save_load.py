"""tocha.jit.save/load: round trips (in a fresh process that never imports the model's
class) and crafted files that must not run code."""

from __future__ import annotations

import importlib.util
import io
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tocha
import tocha.jit as jit
import tocha.nn as nn

MODELS = """
import math
from typing import List, Optional, Tuple

import tocha as torch
import tocha.nn as nn
import tocha.nn.functional as F


def squash(x, limit: float):
    return torch.clamp(x, -limit, limit) * math.sqrt(2.0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.lstm = nn.LSTM(3, 5, batch_first=True)
        self.heads = nn.ModuleList([nn.Linear(5, 2), nn.Linear(5, 2)])
        self.limit = 1.5
        self.names: List[str] = ["a", "b"]

    def forward(self, x, bias: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, int]:
        y = F.relu(self.bn(self.conv(x)))
        seq = y.mean(dim=2).transpose(1, 2)
        out, (h, c) = self.lstm(seq)
        total = torch.zeros(out.shape[0], 2)
        for head in self.heads:
            total = total + head(out[:, -1])
        if bias is not None:
            total = total + bias
        return squash(total, self.limit), len(self.names)
"""

CHILD = """
import sys
import numpy as np
import tocha, tocha.jit
m = tocha.jit.load(sys.argv[1])
inputs, expected = tocha.load(sys.argv[2])
assert "jit_saved_models" not in sys.modules
out = m(*inputs)
for got, want in zip(out if isinstance(out, tuple) else (out,),
                     expected if isinstance(expected, tuple) else (expected,)):
    if isinstance(want, tocha.Tensor):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    else:
        assert got == want, (got, want)
print("ok", type(m).__name__, m.original_name if hasattr(m, "original_name") else "")
"""


def load_models(tmp_path: Path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "jit_saved_models.py").write_text(MODELS)
    spec = importlib.util.spec_from_file_location(
        "jit_saved_models", folder / "jit_saved_models.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["jit_saved_models"] = module
    spec.loader.exec_module(module)
    return module


def run_child(tmp_path: Path, model_file: Path, inputs, expected) -> str:
    tocha.save((inputs, expected), tmp_path / "io.pt")
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(model_file), str(tmp_path / "io.pt")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("mode", ["train", "eval"], ids=["train", "eval"])
def test_scripted_model_round_trips_in_a_fresh_process(tmp_path, mode):
    models = load_models(tmp_path)
    tocha.manual_seed(0)
    model = models.Encoder()
    model.train(mode == "train")
    scripted = jit.script(model)
    x = tocha.randn(2, 1, 4, 4)
    bias = tocha.randn(2)
    path = tmp_path / "model.pt"
    scripted.save(path)
    if mode == "eval":
        expected = scripted(x, bias)
        assert "ok RecursiveScriptModule Encoder" in run_child(tmp_path, path, (x, bias), expected)
    loaded = jit.load(path)
    assert loaded.code == scripted.code and loaded.training == scripted.training
    assert list(loaded.state_dict()) == list(scripted.state_dict())
    for key, value in scripted.state_dict().items():
        np.testing.assert_array_equal(loaded.state_dict()[key].numpy(), value.numpy())
    assert isinstance(loaded.lstm, nn.LSTM) and isinstance(loaded.bn, nn.BatchNorm2d)
    loaded.eval()
    scripted.eval()
    ours, theirs = loaded(x), scripted(x)
    np.testing.assert_allclose(ours[0].detach().numpy(), theirs[0].detach().numpy(), rtol=1e-6)
    assert ours[1] == theirs[1] == 2


def test_loaded_model_keeps_argument_checks(tmp_path):
    models = load_models(tmp_path)
    buffer = io.BytesIO()
    jit.save(jit.script(models.Encoder()), buffer)
    buffer.seek(0)
    loaded = jit.load(buffer, map_location="cpu")
    with pytest.raises(RuntimeError, match="Expected a value of type 'Optional\\[Tensor\\]'"):
        loaded(tocha.randn(1, 1, 4, 4), 3)


def test_function_round_trip_and_extra_files(tmp_path):
    models = load_models(tmp_path)
    scripted = jit.script(models.squash)
    path = tmp_path / "f.pt"
    jit.save(scripted, path, _extra_files={"meta.txt": "hello"})
    extra = {"meta.txt": ""}
    loaded = jit.load(path, _extra_files=extra)
    assert extra["meta.txt"] == b"hello"
    assert isinstance(loaded, jit.ScriptFunction)
    x = tocha.linspace(-3, 3, 7)
    np.testing.assert_allclose(loaded(x, 1.0).numpy(), scripted(x, 1.0).numpy())
    assert "ok ScriptFunction" in run_child(tmp_path, path, (x, 1.0), scripted(x, 1.0))


def test_builtin_module_round_trip(tmp_path):
    conv = jit.script(nn.Conv2d(2, 4, 3, stride=2))
    path = tmp_path / "conv.pt"
    jit.save(conv, path)
    x = tocha.randn(1, 2, 7, 7)
    assert "ok RecursiveScriptModule Conv2d" in run_child(tmp_path, path, (x,), conv(x))


def test_save_refuses_plain_modules(tmp_path):
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'"):
        jit.save(nn.Linear(2, 2), tmp_path / "m.pt")


def test_load_of_a_missing_file_or_a_directory(tmp_path):
    with pytest.raises(ValueError, match="The provided filename .* does not exist"):
        jit.load(tmp_path / "missing.pt")
    with pytest.raises(ValueError, match="The provided filename .* is a directory"):
        jit.load(tmp_path)


# Crafted files: each starts from a good archive and edits its model.json.


def good_archive(tmp_path: Path) -> dict:
    models = load_models(tmp_path)
    buffer = io.BytesIO()
    jit.save(jit.script(models.Encoder()), buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def write_archive(files: dict, document: dict | None = None) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            if name == "model.json" and document is not None:
                content = json.dumps(document)
            archive.writestr(name, content)
    buffer.seek(0)
    return buffer


def with_forward(document: dict, code: str, refs: dict | None = None) -> dict:
    document["root"]["methods"]["forward"] = {"code": code, "refs": refs or {}, "defaults": {}}
    return document


def crafted(marker: Path) -> dict:
    touch = f"touch {marker}"
    return {
        "os_path_ref": lambda d: with_forward(
            d, f"def forward(self, x):\n    os.system({touch!r})\n    return x\n",
            {"os": {"kind": "path", "path": "os"}},
        ),
        "builtin_import": lambda d: with_forward(
            d, f"def forward(self, x):\n    __import__('os').system({touch!r})\n    return x\n",
            {"__import__": {"kind": "builtin", "name": "__import__"}},
        ),
        "eval_builtin": lambda d: with_forward(
            d, "def forward(self, x):\n    eval('1')\n    return x\n",
        ),
        "globals_attribute": lambda d: with_forward(
            d, "def forward(self, x):\n    g = self.forward.__globals__\n    return x\n",
        ),
        "class_attribute": lambda d: with_forward(
            d, "def forward(self, x):\n    return x.__class__.__subclasses__()\n",
        ),
        "str_format_escape": lambda d: with_forward(
            d, "def forward(self, x):\n    return '{0.__class__}'.format(x)\n",
        ),
        "private_attribute": lambda d: with_forward(
            d, "def forward(self, x):\n    return torch._C\n",
            {"torch": {"kind": "path", "path": "tocha"}},
        ),
        "tocha_save": lambda d: with_forward(
            d, f"def forward(self, x):\n    torch.save(x, {str(marker)!r})\n    return x\n",
            {"torch": {"kind": "path", "path": "tocha"}},
        ),
        "tocha_load_path": lambda d: with_forward(
            d, "def forward(self, x):\n    return f(x)\n",
            {"f": {"kind": "path", "path": "tocha.load"}},
        ),
        "numpy_escape": lambda d: with_forward(
            d, f"def forward(self, x):\n    x.numpy().tofile({str(marker)!r})\n    return x\n",
        ),
        "subprocess_class": lambda d: {
            **d, "root": {**d["root"], "modules": {**d["root"]["modules"], "conv": {
                **d["root"]["modules"]["conv"], "class": "subprocess.Popen"}}},
        },
        "non_module_class": lambda d: {
            **d, "root": {**d["root"], "modules": {**d["root"]["modules"], "conv": {
                **d["root"]["modules"]["conv"], "class": "tocha.nn.functional.relu"}}},
        },
        "dunder_state": lambda d: {
            **d, "root": {**d["root"], "modules": {**d["root"]["modules"], "conv": {
                **d["root"]["modules"]["conv"], "state": {"__class__": "x"}}}},
        },
        "bad_value_tag": lambda d: {
            **d, "root": {**d["root"], "attributes": {"limit": {"pickle": "cos\\nsystem"}}},
        },
        "lambda_in_code": lambda d: with_forward(
            d, "def forward(self, x):\n    f = lambda: 1\n    return x\n",
        ),
    }  # fmt: skip


CRAFTED = list(crafted(Path("m")))


@pytest.mark.parametrize("name", CRAFTED, ids=CRAFTED)
def test_crafted_files_are_refused(tmp_path, name):
    files = good_archive(tmp_path)
    marker = tmp_path / "pwned"
    document = crafted(marker)[name](json.loads(files["model.json"]))
    with pytest.raises(Exception) as info:
        model = jit.load(write_archive(files, document))
        model(tocha.randn(1, 1, 4, 4))
    assert isinstance(info.value, (RuntimeError, jit.frontend.FrontendError)), info.value
    assert not marker.exists()


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_pickled_objects_in_the_tensor_record_are_refused(tmp_path, capsys):
    files = good_archive(tmp_path)
    files["tensors.pt"] = pickle.dumps(_Evil())
    with pytest.raises(Exception):  # noqa: B017, PT011
        jit.load(write_archive(files))
    assert "pwned" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "content", [b"not a zip", b"PK\x03\x04garbage"], ids=["text", "broken_zip"]
)
def test_not_an_archive(content):
    with pytest.raises(RuntimeError, match="not a tocha.jit archive"):
        jit.load(io.BytesIO(content))


def test_archive_without_format_marker(tmp_path):
    files = good_archive(tmp_path)
    document = json.loads(files["model.json"])
    document["format"] = "other"
    with pytest.raises(RuntimeError, match="format marker"):
        jit.load(write_archive(files, document))


@pytest.mark.parametrize("name", ["_methods", "save", "forward", "_native"])
def test_attributes_may_not_take_machinery_names(tmp_path, name):
    files = good_archive(tmp_path)
    document = json.loads(files["model.json"])
    document["root"]["attributes"][name] = 1
    with pytest.raises(RuntimeError, match="reserved"):
        jit.load(write_archive(files, document))


@pytest.mark.parametrize("name", ["np", "call", "wrap", "REGISTRY"])
def test_primitive_namespace_gives_primitives_only(tmp_path, name):
    files = good_archive(tmp_path)
    document = with_forward(
        json.loads(files["model.json"]),
        f"def forward(self, x):\n    return ops.{name}\n",
        {"ops": {"kind": "path", "path": "tocha.export.ops"}},
    )
    model = jit.load(write_archive(files, document))
    with pytest.raises(RuntimeError, match="has no attribute"):
        model(tocha.ones(1))


def test_pytorch_torchscript_archive_is_named():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", b"")
        archive.writestr("archive/constants.pkl", b"")
        archive.writestr("archive/code/__torch__.py", b"")
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="TorchScript archive written by PyTorch"):
        jit.load(buffer)
