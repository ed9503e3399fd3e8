"""The IPython extension: `%load_ext convguard` adds `%convguard`, the check
of this kernel (convguard.check()).

A kernel started without the shim has no trace: the extension says so once,
with the command that installs a kernel that preloads it (kernel.py)."""
from ._check import check

INSTALL = "convguard kernel install --user"
_told = False


def _not_preloaded_note():
    return ("convguard: this kernel runs without libconvguard.so preloaded (LD_PRELOAD cannot be set from inside "
            "a running process), so it has no trace of its loads and failures; %%convguard shows what it has "
            "mapped now.  To trace a notebook from its start, install a kernel that preloads convguard:\n"
            "    %s\nthen choose \"Python 3 (convguard)\" in Kernel > Change Kernel and run the notebook again."
            % INSTALL)


def convguard_magic(line=""):
    """%convguard: what this kernel mapped, its GPU memory, and its trace so far."""
    global _told
    c = check()
    if not c.preloaded and not _told:
        _told = True
        print(_not_preloaded_note())
    return c


def load(ipython):
    global _told
    ipython.register_magic_function(convguard_magic, magic_kind="line", magic_name="convguard")
    c = check()
    if not c.preloaded and not _told:
        _told = True
        print(_not_preloaded_note())


def unload(ipython):
    magics = ipython.magics_manager.magics.get("line", {})
    magics.pop("convguard", None)
