"""`convguard kernel install|uninstall`: a Jupyter kernel that runs this
Python's ipykernel with libconvguard.so preloaded.

The options follow `python -m ipykernel install`: --user (the user's Jupyter
folder), --sys-prefix (this Python's prefix: a venv or conda env), --prefix
DIR (DIR/share/jupyter/kernels), neither (the system folder, as ipykernel).

The kernelspec starts `python -m convguard._launch -f {connection_file}`: it
appends the shim to whatever LD_PRELOAD the kernel was given (never replaces
it) and execs ipykernel in the same process, so that Jupyter's signals reach
the kernel itself.  Traces go to ./convguard-logs beside the notebook (the
kernel's working folder) unless --dir; CONVGUARD_FALLBACK=1 only with
--fallback."""
import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile

from . import _HERE, shim_path

DEFAULT_NAME = "convguard"
DEFAULT_DISPLAY = "Python %d (convguard)" % sys.version_info[0]
MARK = "convguard"  # the kernelspec's metadata key: what uninstall removes


def _fail(msg, code=1):
    sys.stderr.write("convguard kernel: %s\n" % msg)
    return code


def _spec(args):
    env = {}
    if args.dir:
        env["CONVGUARD_DIR"] = os.path.abspath(args.dir)
    if args.fallback:
        env["CONVGUARD_FALLBACK"] = "1"
    # a make build, not a wheel: the kernel's Python must find this package and its command too
    pkg_parent = os.path.dirname(_HERE)
    if not _importable_without(pkg_parent):
        env["PYTHONPATH"] = pkg_parent
    if os.environ.get("CONVGUARD_BIN"):
        env["CONVGUARD_BIN"] = os.path.abspath(os.environ["CONVGUARD_BIN"])
    return {
        "argv": [sys.executable, "-m", "convguard._launch", "-f", "{connection_file}"],
        "display_name": args.display_name,
        "language": "python",
        "env": env,
        "metadata": {MARK: {"shim": shim_path(), "fallback": bool(args.fallback),
                            "dir": env.get("CONVGUARD_DIR", "./convguard-logs (beside the notebook)")}},
    }


def _importable_without(folder):
    """Is folder (where this package is) one of this Python's own package
    folders, so that the kernel imports convguard with no PYTHONPATH?"""
    import site
    own = list(getattr(site, "getsitepackages", lambda: [])())
    try:
        own.append(site.getusersitepackages())
    except Exception:
        pass
    here = os.path.realpath(folder)
    return any(os.path.realpath(p) == here for p in own)


def _manager():
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        return None
    return KernelSpecManager()


def install(args):
    if importlib.util.find_spec("ipykernel") is None:
        return _fail("ipykernel is not installed in this Python (%s): `%s -m pip install ipykernel`, then run "
                     "this again" % (sys.executable, sys.executable))
    ksm = _manager()
    if ksm is None:
        return _fail("jupyter_client is not installed in this Python (%s): `%s -m pip install jupyter_client`"
                     % (sys.executable, sys.executable))
    try:
        spec = _spec(args)
    except FileNotFoundError as e:
        return _fail(str(e))
    prefix = sys.prefix if args.sys_prefix else args.prefix
    with tempfile.TemporaryDirectory(prefix="convguard-kernel-") as d:
        with open(os.path.join(d, "kernel.json"), "w") as f:
            json.dump(spec, f, indent=1)
        # ipykernel's logos, where it has them
        try:
            from ipykernel.kernelspec import RESOURCES
            for logo in ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg"):
                if os.path.exists(os.path.join(RESOURCES, logo)):
                    shutil.copy(os.path.join(RESOURCES, logo), d)
        except Exception:
            pass
        try:
            dest = ksm.install_kernel_spec(d, args.name, user=args.user, prefix=prefix)
        except OSError as e:
            where = e.filename or (prefix or "the system's Jupyter folder")
            return _fail("cannot write the kernel to %s (%s): use --user, --sys-prefix or --prefix DIR"
                         % (where, e.strerror or e), 1)
    print("Installed kernelspec %s in %s" % (args.name, dest))
    print("  \"%s\": this Python's ipykernel with %s preloaded; traces in %s%s" % (
        args.display_name, spec["metadata"][MARK]["shim"], spec["metadata"][MARK]["dir"],
        "; CONVGUARD_FALLBACK=1" if args.fallback else ""))
    return 0


def uninstall(args):
    ksm = _manager()
    if ksm is None:
        return _fail("jupyter_client is not installed in this Python (%s)" % sys.executable)
    try:
        spec = ksm.get_kernel_spec(args.name)
    except Exception:
        return _fail("no kernel named %r (`jupyter kernelspec list` shows the installed ones)" % args.name)
    if MARK not in (spec.metadata or {}):
        return _fail("the kernel %r in %s was not installed by convguard: not removed (`jupyter kernelspec "
                     "remove %s` removes any kernel)" % (args.name, spec.resource_dir, args.name))
    try:
        shutil.rmtree(spec.resource_dir)
    except OSError as e:
        return _fail("cannot remove %s: %s" % (spec.resource_dir, e.strerror or e))
    print("Removed kernelspec %s from %s" % (args.name, spec.resource_dir))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="convguard kernel",
                                 description="a Jupyter kernel with convguard preloaded")
    sub = ap.add_subparsers(dest="what")
    ins = sub.add_parser("install", help="install the kernelspec")
    where = ins.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="in the user's Jupyter folder")
    where.add_argument("--sys-prefix", action="store_true", help="in this Python's prefix (%s)" % sys.prefix)
    where.add_argument("--prefix", metavar="DIR", help="in DIR/share/jupyter/kernels")
    ins.add_argument("--name", default=DEFAULT_NAME, help="the kernelspec's name (default %(default)s)")
    ins.add_argument("--display-name", default=DEFAULT_DISPLAY, help="what the kernel menu shows "
                     "(default %(default)r)")
    ins.add_argument("--fallback", action="store_true", help="CONVGUARD_FALLBACK=1 in the kernel")
    ins.add_argument("--dir", metavar="DIR", help="traces in DIR (default ./convguard-logs beside the notebook)")
    un = sub.add_parser("uninstall", help="remove a kernelspec installed by convguard")
    un.add_argument("name", nargs="?", default=DEFAULT_NAME)
    args = ap.parse_args(argv)
    if args.what == "install":
        if any(c in args.name for c in "/\\ ") or not args.name:
            return _fail("--name %r: a kernel name is letters, digits, '-', '.' and '_'" % args.name, 2)
        return install(args)
    if args.what == "uninstall":
        return uninstall(args)
    ap.print_help(sys.stderr)
    return 2
