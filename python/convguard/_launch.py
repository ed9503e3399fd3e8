"""What a convguard kernelspec runs (kernel.py): the shim appended to the
LD_PRELOAD the kernel was given, then ipykernel by exec, in this process.

Never stops a kernel from starting: without the shim it says why on stderr
(Jupyter's log) and starts the kernel untraced."""
import os
import re
import sys


def main():
    try:
        from . import shim_path
        shim = shim_path()
    except Exception as e:  # noqa: BLE001 - any failure here must not block the kernel
        sys.stderr.write("convguard: starting the kernel without the shim: %s\n" % e)
        shim = None
    if shim:
        pre = os.environ.get("LD_PRELOAD", "")
        have = [p for p in re.split(r"[:\s]+", pre) if p]
        if not any(os.path.basename(p) == "libconvguard.so" for p in have):
            os.environ["LD_PRELOAD"] = (pre.rstrip() + " " if pre.strip() else "") + shim
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher"] + sys.argv[1:])


if __name__ == "__main__":
    main()
