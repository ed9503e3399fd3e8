#!/usr/bin/env bash
# bench/check.sh - how long convguard.check() takes (goal: under 100 ms) in a
# python3 that preloads the shim, mapped NVIDIA's real cuDNN 9 and called
# cudnnCreate (so its trace holds a failure: inspect --json and report --json
# both run), and in one without the shim (inspect alone).  Also what str() and
# _repr_html_() add (the text and the page: two more commands each).  Median and
# max of N calls in one process; the package from the source tree (python/).
set -u
cd "$(dirname "$0")/.."
CUDNN_DIR=${CUDNN_DIR:-/usr/local/cuda/lib}
N=${N:-30}
[ -e "$CUDNN_DIR/libcudnn.so.9" ] || { echo "bench/check.sh: no cuDNN 9 in $CUDNN_DIR"; exit 0; }
[ -x build/convguard ] && [ -e build/libconvguard.so ] || { echo "bench/check.sh: run make first"; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat >"$T/b.py" <<PYEOF
import ctypes, sys, time
c = ctypes.CDLL("$CUDNN_DIR/libcudnn.so.9")
h = ctypes.c_void_p()
c.cudnnCreate(ctypes.byref(h))
import convguard
def timed(f):
    t = []
    for _ in range($N):
        t0 = time.perf_counter(); f(); t.append((time.perf_counter() - t0) * 1e3)
    t.sort()
    return t[len(t) // 2], t[-1]
chk = convguard.check()
for name, f in [("check()", convguard.check), ("check() + str()", lambda: str(convguard.check())),
                ("check() + _repr_html_()", lambda: convguard.check()._repr_html_())]:
    med, mx = timed(f)
    print("%-44s median %6.1f ms  max %6.1f ms  (%d calls; trace: %s)" % (sys.argv[1] + ": " + name, med, mx, $N,
          "yes, %d problem(s)" % chk.problems if chk.trace_path else "none"))
PYEOF
export PYTHONPATH=$PWD/python CONVGUARD_BIN=$PWD/build/convguard
(cd "$T" && CONVGUARD_QUIET=1 LD_PRELOAD=$OLDPWD/build/libconvguard.so python3 b.py "shim preloaded")
(cd "$T" && python3 b.py "no shim")
echo "machine: $(nproc) cores, $(uname -r); NVML: $(ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1 && echo present || echo absent)"
