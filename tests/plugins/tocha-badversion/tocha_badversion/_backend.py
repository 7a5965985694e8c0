"""The badver backend: NumPy kernels, but built for plugin API version 999."""

import numpy as np

from tocha.backends import Backend


class BadVersionBackend(Backend):
    """A backend from the future: tocha refuses its plugin API version."""

    api_version = 999
    device_type = "badver"
    xp = np
