"""``tocha.distributed.elastic.multiprocessing``: its `errors` (`record`)."""
