"""More layers, one row each: exported, checked and run by onnxruntime against eager tocha."""

from __future__ import annotations

import pytest

import tocha
import tocha.nn as nn
from tests.onnx.helpers import check_against_eager

IMAGE = (2, 3, 8, 8)
LAYERS = {
    "conv-transpose1d": (lambda: nn.ConvTranspose1d(3, 4, 3, 2, 1, output_padding=1), (2, 3, 7)),
    "conv-transpose2d-groups": (
        lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, dilation=2),
        (2, 4, 5, 5),
    ),
    "conv3d": (lambda: nn.Conv3d(3, 2, 3, padding=1), (1, 3, 4, 5, 5)),
    "group-norm": (lambda: nn.GroupNorm(3, 3), IMAGE),
    "instance-norm-affine": (lambda: nn.InstanceNorm1d(3, affine=True), (2, 3, 7)),
    "rms-norm": (lambda: nn.RMSNorm(8), IMAGE),
    "layer-norm-2d-no-bias": (lambda: nn.LayerNorm((8, 8), bias=False), IMAGE),
    "adaptive-max-pool": (lambda: nn.AdaptiveMaxPool2d((3, 2)), (2, 3, 7, 8)),
    "upsample-nearest": (lambda: nn.Upsample(scale_factor=2), IMAGE),
    "upsample-nearest-size": (lambda: nn.Upsample(size=(5, 11)), IMAGE),
    "upsample-bilinear": (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), IMAGE),
    "upsample-bilinear-corners": (
        lambda: nn.Upsample(size=(5, 11), mode="bilinear", align_corners=True),
        IMAGE,
    ),
    "upsample-bicubic": (lambda: nn.Upsample(scale_factor=2, mode="bicubic"), IMAGE),
    "reflection-pad": (lambda: nn.ReflectionPad2d(2), IMAGE),
    "replication-pad": (lambda: nn.ReplicationPad1d((1, 3)), (2, 3, 5)),
    "zero-pad": (lambda: nn.ZeroPad2d((1, 2, 0, 1)), IMAGE),
    "pixel-shuffle": (lambda: nn.PixelShuffle(2), (1, 8, 3, 3)),
    "pixel-unshuffle": (lambda: nn.PixelUnshuffle(2), IMAGE),
    "prelu": (lambda: nn.PReLU(3), IMAGE),
    "elu-selu-celu": (lambda: nn.Sequential(nn.ELU(), nn.SELU(), nn.CELU(0.5)), IMAGE),
    "mish-hardswish": (lambda: nn.Sequential(nn.Mish(), nn.Hardswish()), IMAGE),
    "shrinks": (lambda: nn.Sequential(nn.Hardshrink(), nn.Softshrink(0.3), nn.Tanhshrink()), IMAGE),
    "sigmoids": (lambda: nn.Sequential(nn.LogSigmoid(), nn.Hardsigmoid(), nn.Softsign()), IMAGE),
    "threshold-relu6-leaky": (
        lambda: nn.Sequential(nn.Threshold(0.1, 20), nn.ReLU6(), nn.LeakyReLU(0.2)),
        IMAGE,
    ),
    "softplus-hardtanh": (lambda: nn.Sequential(nn.Softplus(2.0), nn.Hardtanh(-0.5, 0.5)), IMAGE),
    "glu-softmin": (lambda: nn.Sequential(nn.GLU(), nn.Softmin(1)), IMAGE),
    "transformer-decoder-layer": (lambda: nn.TransformerDecoderLayer(8, 2, 16), None),
}


@pytest.mark.parametrize("name", list(LAYERS), ids=list(LAYERS))
def test_layer(name):
    make, shape = LAYERS[name]
    if shape is None:
        args = (tocha.randn(5, 2, 8), tocha.randn(4, 2, 8))
    else:
        args = (tocha.randn(*shape),)
    check_against_eager(make(), args)


def test_batch_norm_in_training_mode_normalizes_by_the_batch():
    program = check_against_eager(nn.BatchNorm2d(3), (tocha.randn(*IMAGE),), training=True)
    assert [o.name for o in program.model_proto.graph.output] != []
    assert len(program.model_proto.graph.output) == 1  # the buffer updates are not outputs


def test_circular_pad_needs_opset_19():
    check_against_eager(nn.CircularPad2d(1), (tocha.randn(*IMAGE),), opset_version=19)
    check_against_eager(nn.CircularPad2d(1), (tocha.randn(*IMAGE),))  # the default, 20
    with pytest.raises(tocha.onnx.OnnxExporterError, match="circular"):
        tocha.onnx.export(nn.CircularPad2d(1), (tocha.randn(*IMAGE),), opset_version=18)
