"""ONNXProgram: an exported ONNX model, which saves itself and runs on onnxruntime."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Any

import onnx
import tocha


def _tensors(value: Any) -> list:
    """The tensors of nested arguments, in order."""
    if isinstance(value, tocha.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


class ONNXProgram:
    """An ONNX model and the exported program it was written from.

    Args:
        model: the ONNX ``ModelProto``.
        exported_program: the ``tocha.export.ExportedProgram`` that produced it, or None.

    Example:
        >>> program = tocha.onnx.export(tocha.nn.Linear(3, 2), (tocha.randn(4, 3),))
        >>> program.save("linear.onnx")
        >>> program(tocha.randn(4, 3))[0].shape
        tocha.Size([4, 2])
    """

    def __init__(self, model: onnx.ModelProto, exported_program: Any = None) -> None:
        self._model = model
        self.exported_program = exported_program
        self._session: Any = None

    @property
    def model_proto(self) -> onnx.ModelProto:
        """Return the ONNX ``ModelProto`` object."""
        return self._model

    def __repr__(self) -> str:
        return f"ONNXProgram(\n    model=\n{onnx.printer.to_text(self._model.graph)}\n)"

    def save(
        self,
        destination: str | os.PathLike | IO[bytes],
        *,
        include_initializers: bool = True,
        keep_initializers_as_inputs: bool = False,
        external_data: bool | None = None,
    ) -> None:
        """Save the ONNX model to `destination`.

        Args:
            destination: the file path, or a binary file object.
            include_initializers: write the initializers (model weights) into the file.
            keep_initializers_as_inputs: list the initializers as graph inputs too, so that a
                runtime may be given other weights.
            external_data: write the weights to a separate file beside it, named after the
                model file with ``.data`` appended (by default only for models over 2GB);
                tensors under 1 KiB stay in the model file.

        Raises:
            TypeError: if `external_data` is True and `destination` is not a file path.
        """
        if external_data and not isinstance(destination, (str, os.PathLike)):
            raise TypeError("The destination must be a file path when external_data is True")
        model = onnx.ModelProto()
        model.CopyFrom(self._model)
        graph = model.graph
        if keep_initializers_as_inputs:
            listed = {i.name for i in graph.input}
            for init in graph.initializer:
                if init.name not in listed:
                    graph.input.append(
                        onnx.helper.make_tensor_value_info(init.name, init.data_type, init.dims)
                    )
        if not include_initializers:
            del graph.initializer[:]
        if not isinstance(destination, (str, os.PathLike)):
            destination.write(model.SerializeToString())
            return
        if external_data is None:
            external_data = model.ByteSize() > onnx.checker.MAXIMUM_PROTOBUF
        path = os.fspath(destination)
        if external_data:
            onnx.save_model(
                model,
                path,
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=os.path.basename(path) + ".data",
                # Small tensors stay in the model, as torch.onnx's: shape inference reads
                # the constants that sizes depend on (Split's, Reshape's) from there.
                size_threshold=1024,
            )
            data = os.path.join(os.path.dirname(path), os.path.basename(path) + ".data")
            if not os.path.exists(data):  # every tensor was small: an empty file, as torch's
                open(data, "wb").close()
        else:
            onnx.save_model(model, path)

    def initialize_inference_session(self, providers: Sequence[str] | None = None) -> None:
        """Create the onnxruntime session that ``__call__`` runs (CPU by default)."""
        import onnxruntime

        self._session = onnxruntime.InferenceSession(
            self._model.SerializeToString(),
            providers=list(providers or ["CPUExecutionProvider"]),
        )

    def release(self) -> None:
        """Drop the onnxruntime session (and the memory it holds)."""
        self._session = None

    def __call__(self, *args: Any, **kwargs: Any) -> Sequence[tocha.Tensor]:
        """Run the model with onnxruntime on the tensors of `args` and `kwargs` (in order).

        Returns:
            The model's outputs as tocha tensors.
        """
        if self._session is None:
            self.initialize_inference_session()
        names = [i.name for i in self._session.get_inputs()]
        tensors = _tensors(args) + _tensors(kwargs)
        if len(tensors) != len(names):
            raise ValueError(f"the model takes {len(names)} tensors, got {len(tensors)}")
        feed = {name: t.detach().cpu().numpy() for name, t in zip(names, tensors)}
        return tuple(tocha.from_numpy(out) for out in self._session.run(None, feed))
