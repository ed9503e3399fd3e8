"""convguard: find out why cuDNN failed.

The package carries the two native parts, side by side in convguard/_bin/:
libconvguard.so (the shim, preloaded into a job) and the convguard command
(run, report, doctor, smoke, shim-path).  `convguard ...` on PATH and
`python -m convguard ...` run that command; the functions below hand their
paths to Python code and to launchers that set LD_PRELOAD themselves.
"""
import os

__all__ = ["__version__", "binary_path", "shim_path", "command"]

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin")


def _version():
    try:
        from importlib.metadata import version
        return version("convguard")
    except Exception:  # not installed from a wheel (a source checkout)
        return "0+unknown"


__version__ = _version()


def _packaged(name):
    path = os.path.join(_BIN, name)
    if not os.path.exists(path):
        raise FileNotFoundError(
            "convguard: %s is not in this package (%s); install the wheel, "
            "or build from source with make" % (name, _BIN))
    return path


def binary_path():
    """The packaged convguard command."""
    return _packaged("convguard")


def shim_path():
    """The packaged libconvguard.so, for LD_PRELOAD (what `convguard shim-path` prints)."""
    return _packaged("libconvguard.so")


def command(*args):
    """argv that runs the packaged command with args, for subprocess."""
    return [binary_path()] + [str(a) for a in args]
