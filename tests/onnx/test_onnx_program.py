"""ONNXProgram (save, run), export's file options, is_in_onnx_export and the errors."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest

import tocha
import tocha.nn as nn
import tocha.onnx
from tests.onnx.helpers import assert_close, session
from tocha.onnx import errors

RUN_WITHOUT_TOCHA = textwrap.dedent(
    """
    import sys
    sys.modules["tocha"] = None
    import numpy as np
    import onnx
    import onnxruntime as ort

    model_path, input_path, output_path = sys.argv[1:]
    onnx.checker.check_model(onnx.load(model_path), full_check=True)
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"x": np.load(input_path)})
    np.save(output_path, out)
    """
)


def small_cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3)
    ).eval()


@pytest.mark.parametrize("external_data", [True, False], ids=["external-data", "one-file"])
def test_saved_file_runs_where_tocha_is_not_installed(tmp_path, external_data):
    model = small_cnn()
    path = tmp_path / "cnn.onnx"
    tocha.onnx.export(
        model,
        (tocha.randn(2, 1, 6, 6),),
        str(path),
        input_names=["x"],
        dynamic_axes={"x": {0: "batch"}},
        external_data=external_data,
    )
    assert (tmp_path / "cnn.onnx.data").exists() == external_data
    x = tocha.randn(5, 1, 6, 6)
    np.save(tmp_path / "x.npy", x.numpy())
    script = tmp_path / "run.py"
    script.write_text(RUN_WITHOUT_TOCHA)
    result = subprocess.run(
        [sys.executable, str(script), str(path), str(tmp_path / "x.npy"), str(tmp_path / "y")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    with tocha.no_grad():
        assert_close(np.load(tmp_path / "y.npy"), model(x))


def test_program_runs_and_saves(tmp_path):
    model = small_cnn()
    program = tocha.onnx.export(model, (tocha.randn(2, 1, 6, 6),))
    assert isinstance(program, tocha.onnx.ONNXProgram)
    assert isinstance(program.model_proto, onnx.ModelProto)
    x = tocha.randn(2, 1, 6, 6)
    (out,) = program(x)
    assert isinstance(out, tocha.Tensor)
    with tocha.no_grad():
        assert_close(out.numpy(), model(x))
    program.save(tmp_path / "m.onnx")
    loaded = onnx.load(str(tmp_path / "m.onnx"))
    assert len(loaded.graph.initializer) == len(program.model_proto.graph.initializer)
    program.release()
    assert len(program(x)) == 1


def test_save_initializer_options(tmp_path):
    program = tocha.onnx.export(nn.Linear(3, 2), (tocha.randn(4, 3),), input_names=["x"])
    program.save(tmp_path / "a.onnx", keep_initializers_as_inputs=True)
    kept = onnx.load(str(tmp_path / "a.onnx"))
    assert [i.name for i in kept.graph.input] == ["x", "weight", "bias"]
    assert {i.name for i in kept.graph.initializer} == {"weight", "bias"}
    program.save(tmp_path / "b.onnx", include_initializers=False)
    bare = onnx.load(str(tmp_path / "b.onnx"))
    assert [i.name for i in bare.graph.input] == ["x"] and not bare.graph.initializer
    with pytest.raises(TypeError, match="file path"):
        program.save(object(), external_data=True)  # type: ignore[arg-type]


def test_export_params_false_and_weights_as_inputs(tmp_path):
    model = nn.Linear(3, 2)
    path = tmp_path / "w.onnx"
    tocha.onnx.export(
        model,
        (tocha.randn(4, 3),),
        str(path),
        input_names=["x"],
        keep_initializers_as_inputs=True,
        external_data=False,
    )
    with_inputs = onnx.load(str(path))
    assert [i.name for i in with_inputs.graph.input] == ["x", "weight", "bias"]
    x = tocha.randn(4, 3)
    weight, bias = tocha.randn(2, 3), tocha.randn(2)
    feed = {"x": x.numpy(), "weight": weight.numpy(), "bias": bias.numpy()}
    (out,) = session(with_inputs).run(None, feed)
    assert_close(out, x @ weight.T + bias)
    tocha.onnx.export(
        model, (tocha.randn(4, 3),), str(path), export_params=False, external_data=False
    )
    assert not onnx.load(str(path)).graph.initializer


def test_dynamo_false_writes_the_file_and_returns_none(tmp_path):
    path = tmp_path / "legacy.onnx"
    assert tocha.onnx.export(nn.Linear(3, 2), (tocha.randn(1, 3),), str(path), dynamo=False) is None
    assert path.exists()


class Spy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[bool] = []

    def forward(self, x):
        self.seen.append(tocha.onnx.is_in_onnx_export())
        return x * 2


def test_is_in_onnx_export():
    spy = Spy()
    assert not tocha.onnx.is_in_onnx_export()
    tocha.onnx.export(spy, (tocha.randn(2),))
    spy(tocha.randn(2))
    assert spy.seen[0] is True and spy.seen[-1] is False
    assert not tocha.onnx.is_in_onnx_export()


class Unsupported(nn.Module):
    def forward(self, x):
        return tocha.special.bessel_j0(x) + 1


def test_unsupported_operator_raises_and_names_it():
    with pytest.raises(errors.UnsupportedOperatorError) as info:
        tocha.onnx.export(Unsupported(), (tocha.randn(3),))
    message = str(info.value)
    assert "bessel_j0" in message
    assert "to ONNX opset version 20 is not supported" in message
    assert isinstance(info.value, tocha.onnx.OnnxExporterError)
    assert isinstance(info.value, RuntimeError)


def test_error_classes():
    assert errors.OnnxExporterError is tocha.onnx.OnnxExporterError
    assert issubclass(errors.UnsupportedOperatorError, errors.OnnxExporterError)
    assert issubclass(errors.OnnxExporterWarning, UserWarning)


@pytest.mark.parametrize("supported", [None, 20], ids=["never", "later"])
def test_unsupported_operator_message_as_torch(torch, supported):
    want = str(torch.onnx.errors.UnsupportedOperatorError("aten::foo", 18, supported))
    got = str(errors.UnsupportedOperatorError("aten::foo", 18, supported))
    assert got == want


def test_exported_program_is_accepted():
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    program = tocha.export.export(model, (tocha.randn(2, 3),))
    onnx_program = tocha.onnx.export(program)
    x = tocha.randn(2, 3)
    with tocha.no_grad():
        assert_close(onnx_program(x)[0].numpy(), model(x))


def test_save_to_a_file_object():
    buffer = io.BytesIO()
    program = tocha.onnx.export(nn.Linear(3, 2), (tocha.randn(4, 3),))
    program.save(buffer)
    loaded = onnx.load_from_string(buffer.getvalue())
    assert {i.name for i in loaded.graph.initializer} == {"weight", "bias"}
    with pytest.raises(TypeError, match="file path"):
        program.save(io.BytesIO(), external_data=True)
    buffer = io.BytesIO()  # export writes one file to a file object, as torch.onnx does
    tocha.onnx.export(nn.Linear(3, 2), (tocha.randn(4, 3),), buffer)
    assert {i.name for i in onnx.load_from_string(buffer.getvalue()).graph.initializer} == {
        "weight",
        "bias",
    }
    buffer = io.BytesIO()
    tocha.onnx.export(nn.Linear(3, 2), (tocha.randn(4, 3),), buffer, external_data=False)
    assert onnx.load_from_string(buffer.getvalue()).graph.node


def test_deprecated_options_are_accepted():
    program = tocha.onnx.export(
        nn.Linear(3, 2),
        (tocha.randn(4, 3),),
        verbose=True,
        training=tocha.onnx.TrainingMode.EVAL,
        operator_export_type=tocha.onnx.OperatorExportTypes.ONNX,
        do_constant_folding=True,
    )
    assert [n.op_type for n in program.model_proto.graph.node if n.op_type == "MatMul"]
    assert int(tocha.onnx.TrainingMode.TRAINING) == 2
