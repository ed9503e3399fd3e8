"""`convguard` (the console script) and `python -m convguard`: the packaged
command itself, by exec, so that its arguments, its exit status and the
signals sent to it are those of the native program (no Python process stays
in between).  `convguard kernel ...` is this package's own (kernel.py)."""
import os
import sys

from . import binary_path


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["kernel"]:
        from .kernel import main as kernel_main
        return kernel_main(args[1:])
    try:
        exe = binary_path()
    except FileNotFoundError as e:
        sys.stderr.write("%s\n" % e)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(exe, ["convguard"] + args)
    except OSError as e:
        sys.stderr.write("convguard: cannot run %s: %s\n" % (exe, e.strerror))
        return 127


if __name__ == "__main__":
    sys.exit(main())
