"""The GPU's device files exist but this user cannot open them (issue 27: "device nodes that exist
but this user cannot open"; what a container or a host with restrictive /dev/nvidia* modes gives a
user outside the video group).  In a private mount namespace each /dev/nvidia* node is covered by a
copy of mode 0600 owned by root, and PyTorch runs as uid 65534.  Needs root, unshare, setpriv,
mknod, and a Python, torch, shim and repository that uid 65534 can read."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lib  # noqa: E402

NOBODY = 65534

if sys.argv[1:] != ["inside"]:
    import glob
    import shutil
    import stat
    import subprocess
    import tempfile
    lib.need("torch")
    if os.geteuid() != 0:
        lib.skip("needs root (a private mount namespace and device nodes)")
    for tool in ("unshare", "setpriv", "mount", "mknod"):
        if not shutil.which(tool):
            lib.skip("%s is not installed here" % tool)
    if subprocess.run(["unshare", "-m", "--propagation", "private", "true"], env=lib.untraced_env()).returncode:
        lib.skip("unshare -m is refused here (no CAP_SYS_ADMIN)")
    nodes = [p for p in sorted(glob.glob("/dev/nvidia*")) if stat.S_ISCHR(os.stat(p).st_mode)]
    if not nodes:
        lib.skip("no /dev/nvidia* device nodes here")
    me = os.path.abspath(__file__)
    shim = [p for p in os.environ.get("LD_PRELOAD", "").replace(":", " ").split() if "libconvguard" in p]
    drop = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]
    try:
        probe = subprocess.run(drop + ["sh", "-c", 'for f in "$@"; do test -r "$f" || { echo "cannot read $f"; exit 1; }; '
                                       'done; exec "$0" -c "import torch"', sys.executable, me, lib.__file__] + shim,
                               env=lib.untraced_env(dict(HOME="/tmp")), capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        lib.skip("uid %d could not import torch within 120 s" % NOBODY)
    if probe.returncode:
        lib.skip("uid %d cannot run this Python with torch and the shim here: %s" % (
            NOBODY, (probe.stdout + probe.stderr).strip().splitlines()[-1:] or "?"))
    # the traces of uid 65534's process go to a folder it owns inside the run's folder
    run_dir = os.environ.get("CONVGUARD_DIR", tempfile.gettempdir())
    os.chmod(run_dir, os.stat(run_dir).st_mode | 0o011)  # others may pass through (not list, not write)
    tdir = os.path.join(run_dir, "uid%d" % NOBODY)
    os.makedirs(tdir, exist_ok=True)
    os.chown(tdir, NOBODY, NOBODY)
    os.chmod(tdir, 0o700)
    cover = tempfile.mkdtemp(prefix="cg2-dev-")
    steps = ["mount -t tmpfs -o size=64k,mode=0755 cg2dev %s" % cover]
    for n in nodes:
        st = os.stat(n)
        c = os.path.join(cover, os.path.basename(n))
        steps.append("mknod -m 0600 %s c %d %d && mount --bind %s %s" % (
            c, os.major(st.st_rdev), os.minor(st.st_rdev), c, n))
    inner = " && ".join(steps) + ' && exec "$@"'
    print("device nodes covered (mode 0600, root): %s" % " ".join(nodes), flush=True)
    os.execvpe("unshare", ["unshare", "-m", "--propagation", "private", "sh", "-c", inner, "sh"] + drop +
               ["env", "HOME=/tmp", "CONVGUARD_DIR=" + tdir, sys.executable, me, "inside"], dict(os.environ))

import torch  # noqa: E402

print("cuda available:", torch.cuda.is_available(), flush=True)
x = torch.zeros(1, device="cuda")
print(x)
