"""`tocha.utils.model_zoo`: `load_url`, as `torch.utils.model_zoo` (which moved to the hub:
`load_url` is `tocha.hub.load_state_dict_from_url`)."""

from tocha.hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
