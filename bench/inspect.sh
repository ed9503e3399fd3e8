#!/usr/bin/env bash
# bench/inspect.sh - how long `convguard inspect PID` takes on a live python3
# that mapped NVIDIA's real cuDNN 9 and cudart (goal: under 100 ms), and on one
# that mapped the real cuDNN with every part loaded (cudnnCreate ran: graph,
# engines, heuristic, ...; the largest files).  Median and max of N runs,
# each a fresh `convguard inspect --json` process (what convguard.check() runs).
set -u
cd "$(dirname "$0")/.."
CG=${CG:-$PWD/build/convguard}
CUDNN_DIR=${CUDNN_DIR:-/usr/local/cuda/lib}
N=${N:-50}
[ -e "$CUDNN_DIR/libcudnn.so.9" ] || { echo "bench/inspect.sh: no cuDNN 9 in $CUDNN_DIR"; exit 0; }
T=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
start() { # CODE -> $LIVE: a python3 that ran it and sleeps
    rm -f "$T/ready"
    LD_LIBRARY_PATH=$CUDNN_DIR python3 -c "$1
open('$T/ready', 'w').close()
import time; time.sleep(600)" </dev/null >/dev/null 2>&1 &
    LIVE=$!
    pids+=($LIVE)
    for _ in $(seq 200); do [ -e "$T/ready" ] && break; sleep 0.05; done
}
run() { # NAME PID
    local times=() t0 t1
    for ((i = 0; i < N; i++)); do
        t0=$(date +%s%N)
        "$CG" inspect --json "$2" >/dev/null
        t1=$(date +%s%N)
        times+=($(( (t1 - t0) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk -v name="$1" -v n=$N -v libs="$(grep -c 'libcud' /proc/$2/maps)" \
        '{a[NR]=$1} END {printf "%-44s median %6.1f ms  max %6.1f ms  (%d runs; %d CUDA mappings)\n", name, a[int((n+1)/2)]/1000, a[n]/1000, n, libs}'
}
start "import ctypes; ctypes.CDLL('libcudnn.so.9'); ctypes.CDLL('libcudart.so.13')"
run "inspect: libcudnn.so.9 + libcudart.so.13" "$LIVE"
start "import ctypes; c = ctypes.CDLL('libcudnn.so.9'); h = ctypes.c_void_p(); c.cudnnCreate(ctypes.byref(h))"
run "inspect: cuDNN after cudnnCreate (parts loaded)" "$LIVE"
echo "machine: $(nproc) cores, $(uname -r); NVML: $(ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1 && echo present || echo absent)"
