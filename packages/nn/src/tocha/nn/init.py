"""tocha.nn.init: parameter initialisation, as ``torch.nn.init``."""
