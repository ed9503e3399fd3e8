"""lib.py - what the corpus2 cases share (tests/gpu/corpus2/<case>/case.py).

A case that cannot make its failure here says so on stdout with one line
"CORPUS2-SKIP: <why>" and exits 0; score.py then says SKIP with that reason.
Helpers that start other processes (a memory hog, a checker) start them
untraced: without the shim in LD_PRELOAD and without CONVGUARD_*, so that only
the case's own processes are in the run's traces."""
import importlib.util
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HOG = os.path.join(HERE, "..", "hog.py")


def skip(why):
    print("CORPUS2-SKIP: " + why, flush=True)
    sys.exit(0)


def need(*modules):
    """Skips the case when one of the modules is not installed (looked up, not imported)."""
    for m in modules:
        try:
            found = importlib.util.find_spec(m) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            skip("%s is not installed here" % m)


def untraced_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVGUARD_")}
    pre = [p for p in env.get("LD_PRELOAD", "").replace(":", " ").split() if "libconvguard" not in p]
    if pre:
        env["LD_PRELOAD"] = " ".join(pre)
    else:
        env.pop("LD_PRELOAD", None)
    env.update(extra or {})
    return env


def start_hog(leave_mib, secs=120):
    """Another process (PyTorch, untraced) that holds all but leave_mib MiB of the GPU; returns it
    once it holds the memory, with its 'hog: ...' line."""
    p = subprocess.Popen([sys.executable, HOG, str(leave_mib), str(secs)], env=untraced_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("hog:"):
        p.kill()
        skip("the memory hog did not start (%r)" % line)
    print("other process (pid %d): %s" % (p.pid, line), flush=True)
    return p


def stop(p):
    if p and p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def package_dir(name):
    """The folder of an installed package (nvidia.cudnn, torch), found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    return os.path.dirname(spec.origin) if spec.origin else None


def wait_file(path, secs):
    end = time.time() + secs
    while time.time() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.1)
    return False
