"""Real-world row 3 with PyTorch: a copy of the wheel's cuDNN that lacks one part
(libcudnn_engines_precompiled) first in LD_LIBRARY_PATH; cuDNN's dispatcher then finds that part
by its bare name in the system's cuDNN (/usr/lib/x86_64-linux-gnu, another version) and the
convolution fails."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

SYSTEM = "/usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9"
if sys.argv[1:] != ["inside"]:
    import glob
    import shutil
    import tempfile
    lib.need("torch")
    nvidia = lib.package_dir("nvidia") or "/nonexistent"
    wheel = sorted(glob.glob(os.path.join(nvidia, "*", "lib", "libcudnn.so.9")))
    parts = sorted(glob.glob(os.path.join(os.path.dirname(wheel[0]), "libcudnn*.so.9"))) if wheel else []
    if not parts:
        lib.skip("no cuDNN wheel (site-packages/nvidia/*/lib/libcudnn.so.9) here")
    if not os.path.exists(SYSTEM):
        lib.skip("no system cuDNN with %s here: the part would be missing, not from another copy" % SYSTEM)
    for old in glob.glob(os.path.join(tempfile.gettempdir(), "cg2-cudnn-*")):
        shutil.rmtree(old, ignore_errors=True)
    copy = tempfile.mkdtemp(prefix="cg2-cudnn-")
    for p in parts:
        if "engines_precompiled" not in p:
            shutil.copy2(p, copy)
    print("cuDNN copy without engines_precompiled:", copy, flush=True)
    env = dict(os.environ, LD_LIBRARY_PATH=copy + (":" + os.environ["LD_LIBRARY_PATH"]
                                                   if os.environ.get("LD_LIBRARY_PATH") else ""))
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), "inside"], env)

import torch  # noqa: E402

x = torch.randn(8, 64, 56, 56, device="cuda")
conv = torch.nn.Conv2d(64, 64, 3, padding=1).cuda()
y = conv(x)
y.sum().backward()
torch.cuda.synchronize()
print("conv ok", float(y.mean()))
