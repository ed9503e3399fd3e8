#!/usr/bin/env bash
# bench/startup.sh - what the shim adds to a process start: /bin/true,
# python3 -c pass, and loading NVIDIA's cuDNN 9 (build/bench/load_cudnn:
# dlopen libcudnn.so.9 + cudnnGetVersion, which loads libcudnn_graph.so.9).
# Both sides run through `env` so the only difference is LD_PRELOAD.
# hyperfine when installed (median of 300 runs after 20 warm-ups: the mean
# follows the noise of a shared machine), else a timed loop of 300 runs.  Also
# counts the system calls each start makes (strace) and the trace files left:
# a process that touches no CUDA library leaves none (issue 14's goal: at
# most 0.3 ms added to such a start, and no file).
set -u
cd "$(dirname "$0")/.."
SHIM=${SHIM:-$PWD/build/libconvguard.so}
CUDNN_DIR=${CUDNN_DIR:-/usr/local/cuda/lib}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export CONVGUARD_QUIET=1 CONVGUARD_DIR=$T/traces
N=300
cmds=("/bin/true" "python3 -c pass")
[ -e "$CUDNN_DIR/libcudnn.so.9" ] && [ -x build/bench/load_cudnn ] && cmds+=("build/bench/load_cudnn $CUDNN_DIR")
ms() { # PRELOAD CMD -> mean ms per run
    if command -v hyperfine >/dev/null; then
        hyperfine -N -w 20 -r $N --export-json $T/h.json "env LD_PRELOAD=$1 $2" >/dev/null 2>&1 &&
            python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1e3))' $T/h.json
    else
        local t0 t1
        t0=$(date +%s%N)
        for ((i = 0; i < N; i++)); do env LD_PRELOAD=$1 $2 >/dev/null; done
        t1=$(date +%s%N)
        awk -v a=$t0 -v b=$t1 -v n=$N 'BEGIN{printf "%.3f", (b-a)/n/1e6}'
    fi
}
sys() { # PRELOAD CMD -> system calls of one run
    command -v strace >/dev/null || { echo -; return; }
    env LD_PRELOAD=$1 strace -f -c -o $T/st $2 >/dev/null 2>&1
    awk '/total/ {print $(NF-2)}' $T/st
}
echo "== 3. start-up ($(command -v hyperfine >/dev/null && echo "hyperfine, median of $N runs" || echo "loop of $N runs"))"
printf '%-42s %9s %9s %9s %9s %9s %7s\n' command "ms plain" "ms shim" "added ms" "syscalls" "(shim)" "files"
for c in "${cmds[@]}"; do
    rm -rf "$CONVGUARD_DIR"
    a=$(ms "" "$c"); b=$(ms "$SHIM" "$c")
    files=$(ls "$CONVGUARD_DIR" 2>/dev/null | wc -l)
    printf '%-42s %9s %9s %9s %9s %9s %7s\n' "${c/$CUDNN_DIR/<cudnn>}" $a $b \
        "$(awk -v a=$a -v b=$b 'BEGIN{printf "%+.3f", b-a}')" "$(sys "" "$c")" "$(sys "$SHIM" "$c")" "$files"
done
