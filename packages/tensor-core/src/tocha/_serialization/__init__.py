"""The machinery behind `tocha.serialization`: the registries (`_registry`), the zip archive
and atomic writes (`_archive`), storages and views (`_storage`), the pickler and the
restricted unpickler of PyTorch's checkpoint format (`_pickle`), and safetensors
(`_safetensors`). Imported on first save or load, never by ``import tocha``."""
