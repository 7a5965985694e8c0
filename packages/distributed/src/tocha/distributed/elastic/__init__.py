"""``tocha.distributed.elastic``, as ``torch.distributed.elastic``: what a training script
started by torchrun (``tocha.distributed.run``) imports from it, `multiprocessing.errors`'s
`record`. tocha's launcher restarts nothing."""
