"""``tocha.distributed.checkpoint``, as ``torch.distributed.checkpoint`` (DCP): saving and
loading state dicts sharded over ranks. Not in tocha yet beyond the names libraries import
(`hf_storage`); save a rank's state dict with `tocha.save` or safetensors."""
