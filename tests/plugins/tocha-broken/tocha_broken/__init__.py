"""A test backend whose `register` fails, as a plugin missing its native library would: tocha
must keep the error, name this distribution when the device is asked for, and still import."""


def register():
    """The ``tocha.backends`` entry point: fails to load a native library."""
    raise ImportError(
        "libbrokendev.so.1: cannot open shared object file: No such file or directory"
    )
