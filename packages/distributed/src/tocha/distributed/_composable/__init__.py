"""``tocha.distributed._composable``, as PyTorch's: the composable parallelisms
(`tocha.distributed._composable.fsdp`)."""
