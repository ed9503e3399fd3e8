#!/usr/bin/env bash
# bench/capture.sh - what `convguard run`'s stderr capture costs a program that
# prints a lot: 200 MB (BYTES) of stderr written by build/report/stderr_probe,
# in 64 KiB writes and in 100-byte lines, to /dev/null, to a pipe, to a file
# and to a terminal (build/report/pty_run), three ways: the program alone,
# under `convguard run --no-capture` (the shim, no relay) and under
# `convguard run` (the relay: a pipe, a pty, or the file read back at the end).
# Prints the median wall time of REPS runs (default 5) and the ratio capture /
# no-capture.  Usage: make bench-capture  (or bench/capture.sh after make test)
set -u
cd "$(dirname "$0")/.."
P=build/report/stderr_probe
R=build/report/pty_run
CG=build/convguard
[ -x $P ] && [ -x $R ] && [ -x $CG ] || { echo "run: make all build/report/stderr_probe build/report/pty_run"; exit 2; }
BYTES=${BYTES:-200000000}
REPS=${REPS:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# the probe loads a stand-in libcudart.so.13, as a real job loads CUDA: it gets a trace, the run a capture
cp "$(ldconfig -p | sed -n 's/.*libm\.so\.6 (libc6,x86-64) => //p' | head -1)" "$T/libcudart.so.13"
export PROBE_DLOPEN=$T/libcudart.so.13
now() { date +%s%N; }
# target how cmd... : one run, prints seconds
one() {
    local target=$1; shift
    local t0 t1
    rm -rf "$T/d" "$T/out"
    t0=$(now)
    case $target in
    null) "$@" 2>/dev/null ;;
    pipe) "$@" 2>&1 >/dev/null | cat >/dev/null ;;
    file) "$@" 2>"$T/out" ;;
    tty) "$R" -T 600 -o "$T/out" -- "$@" >/dev/null ;;
    esac
    t1=$(now)
    awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", (b-a)/1e9}'
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
printf '%-6s %-7s %10s %12s %10s %9s %9s\n' target writes alone no-capture capture "ratio" "MB/s"
for chunk in 65536 100; do
    for target in null pipe file tty; do
        a="" n="" c=""
        for _ in $(seq "$REPS"); do
            a+="$(one $target $P spew "$BYTES" $chunk) "
            n+="$(one $target $CG run --quiet --no-capture --dir "$T/d" -- $P spew "$BYTES" $chunk) "
            c+="$(one $target $CG run --quiet --dir "$T/d" -- $P spew "$BYTES" $chunk) "
        done
        a=$(echo "$a" | median) n=$(echo "$n" | median) c=$(echo "$c" | median)
        printf '%-6s %-7s %9ss %11ss %9ss %9s %9s\n' $target $chunk "$a" "$n" "$c" \
            "$(awk -v c=$c -v n=$n 'BEGIN{printf "%.3f", c/n}')" "$(awk -v c=$c -v b=$BYTES 'BEGIN{printf "%.0f", b/1e6/c}')"
    done
done
echo "(median of $REPS runs of $BYTES bytes; writes: bytes per write(2); ratio: capture / no-capture;"
echo " MB/s: with capture.  $(nproc) CPUs.  tty: the terminal is build/report/pty_run recording to a file)"
