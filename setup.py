"""Builds the convguard wheel: `make portable` (packaging/packaging.mk) makes
libconvguard.so and the convguard command with zig cc for glibc 2.17; they go
into the package as convguard/_bin/, side by side (the command finds the shim
next to itself).  The wheel holds no Python extension: its tag says which
Linux it runs on (py3-none-manylinux_2_17_<arch>), checked by auditwheel in
packaging/test-wheel.sh.

CONVGUARD_ARCH=aarch64 cross-builds for aarch64."""
import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ARCH = os.environ.get("CONVGUARD_ARCH", "x86_64")
if ARCH not in ("x86_64", "aarch64"):
    sys.exit("convguard: CONVGUARD_ARCH must be x86_64 or aarch64, not %r" % ARCH)
PORTABLE = "build-portable" if ARCH == "x86_64" else "build-portable-" + ARCH
SHIPPED = ("convguard", "libconvguard.so")
SLURM_SOURCE = ("README.md", "Makefile", "spank_convguard.c", "spank_convguard.map", "settings.c", "settings.h")


def makefile_version():
    """The one version number: the Makefile's VERSION."""
    with open(os.path.join(HERE, "Makefile")) as f:
        m = re.search(r"^VERSION\s*:?=\s*(\S+)", f.read(), re.M)
    if not m:
        sys.exit("convguard: no VERSION in Makefile")
    return m.group(1)


class BuildWithMake(build_py):
    """build_py, plus the binaries made by make, into convguard/_bin/."""

    def run(self):
        super().run()
        jobs = str(os.cpu_count() or 1)
        # zig (in this build environment) is the compiler: no system one is needed
        cmd = ["make", "-j" + jobs, "portable", "PYTHON=" + sys.executable, "PORTABLE_ARCH=" + ARCH, "NEEDS_CHECK=0"]
        self.announce(" ".join(cmd), level=2)
        try:
            subprocess.check_call(cmd, cwd=HERE)
        except FileNotFoundError:
            sys.exit("convguard: building the wheel needs make (Debian/Ubuntu: apt-get install make libjansson-dev)")
        dest = os.path.join(self.build_lib, "convguard", "_bin")
        os.makedirs(dest, exist_ok=True)
        for name in SHIPPED:
            shutil.copy2(os.path.join(HERE, PORTABLE, name), os.path.join(dest, name))
            os.chmod(os.path.join(dest, name), 0o755)


class NativeDistribution(Distribution):
    """Native files inside: the package goes to platlib (auditwheel checks
    the ELF files there), although no Python extension is built."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """No Python ABI, one platform: the binaries' glibc floor and machine."""

    def get_tag(self):
        return "py3", "none", "manylinux_2_17_%s.manylinux2014_%s" % (ARCH, ARCH)


setup(
    version=makefile_version(),
    distclass=NativeDistribution,
    # beside make's trees, not in build/ (make's own)
    options={"build": {"build_base": PORTABLE + "/setuptools"}},
    cmdclass={"build_py": BuildWithMake, "bdist_wheel": PlatformWheel},
    # man finds share/man next to a bin/ on PATH (a venv's too); the Slurm plugin's source, for
    # administrators to build against their Slurm's spank.h (docs/slurm.md): `make` in that folder
    data_files=[
        ("share/man/man1", ["docs/convguard.1"]),
        ("share/convguard/slurm", ["slurm/" + f for f in SLURM_SOURCE]),
        ("share/convguard/slurm/core", ["shim/core/safedir.c", "shim/core/safedir.h"]),
    ],
)
