"""convguard: find out why cuDNN failed.

The package carries the two native parts, side by side in convguard/_bin/:
libconvguard.so (the shim, preloaded into a job) and the convguard command
(run, report, inspect, doctor, smoke, shim-path).  `convguard ...` on PATH and
`python -m convguard ...` run that command (`convguard kernel ...` is this
package's own, convguard/kernel.py); the functions below hand their paths to
Python code and to launchers that set LD_PRELOAD themselves.

In a running program (a notebook's kernel, a training script):
    convguard.check()       what this process mapped, its GPU memory and, when
                            the shim is preloaded, its trace so far (_check.py)
    %load_ext convguard     adds %convguard to IPython (magic.py)
"""
import os
import subprocess

__all__ = ["__version__", "binary_path", "shim_path", "command", "check"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_BIN = os.path.join(_HERE, "_bin")
# a source checkout: python/convguard/ beside make's build/
_SOURCE_BUILD = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build")


def _version():
    try:
        from importlib.metadata import version
        return version("convguard")
    except Exception:  # not installed from a wheel (a source checkout)
        return "0+unknown"


__version__ = _version()


def _native(name):
    """Where a native part is: the wheel's _bin/, else (a make build, whose
    command sets CONVGUARD_BIN when it runs Python: tools/convguard.c) next
    to that command, else a source checkout's build/."""
    places = [_BIN]
    exe = os.environ.get("CONVGUARD_BIN")
    if exe:
        d = os.path.dirname(os.path.abspath(exe))
        places += [d, os.path.join(os.path.dirname(d), "lib")]
    places.append(_SOURCE_BUILD)
    for d in places:
        path = os.path.join(d, name)
        if os.path.isfile(path) and (name.endswith(".so") or os.access(path, os.X_OK)):
            return path
    raise FileNotFoundError(
        "convguard: %s is not in this package (%s); install the wheel "
        "(in a convguard checkout: pip install . ; or make wheel, then "
        "pip install dist/convguard-*.whl), or build from source with make "
        "and set CONVGUARD_BIN=/path/to/build/convguard" % (name, _BIN))


def binary_path():
    """The packaged convguard command."""
    return _native("convguard")


def shim_path():
    """The packaged libconvguard.so, for LD_PRELOAD (what `convguard shim-path` prints)."""
    return _native("libconvguard.so")


def command(*args):
    """argv that runs the packaged command with args, for subprocess."""
    return [binary_path()] + [str(a) for a in args]


def check(pid=None):
    """What this process (or pid) runs on now: convguard.check.Check."""
    from ._check import check as _check
    return _check(pid)


def load_ipython_extension(ipython):
    """%load_ext convguard"""
    from .magic import load
    load(ipython)


def unload_ipython_extension(ipython):
    from .magic import unload
    unload(ipython)
