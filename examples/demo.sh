#!/usr/bin/env bash
# examples/demo.sh - `make demo`: the seeds' failure, replayed anywhere.
#
# On a machine without a GPU it runs a TensorFlow-like program (dlopen +
# dlsym of libcudnn.so.9, like TF's stream executor) on convguard's TEST
# DOUBLES of libcudnn / libcudart / libcuda, with "another process" holding
# all but a few MiB of the simulated GPU -- the situation behind "Failed to
# get convolution algorithm. This is probably because cuDNN failed to
# initialize" -- and prints what convguard's trace says.
# With a GPU (nvidia-smi works) it runs `convguard smoke` instead.
set -u
cd "$(dirname "$0")/.."
B=${CG_BUILD:-$PWD/build}
D=$B/doubles
OUT=$(mktemp -d "${TMPDIR:-/tmp}/convguard-demo.XXXXXX")
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && [ -z "${CONVGUARD_DEMO_DOUBLES:-}" ]; then
    echo "== a GPU is present: convguard smoke (a tiny convolution through your cuDNN, traced)"
    exec "$B/convguard" smoke
fi
echo "== no GPU here: replaying the classic failure on test doubles (not NVIDIA's libraries)"
# "another process": a real one, so that the report can name it as nvidia-smi would
sleep 300 &
HOLDER=$!
trap 'kill $HOLDER 2>/dev/null' EXIT
echo "   simulated GPU: 1024 MiB, of which 1020 MiB are held by another process (pid $HOLDER, 'sleep')"
echo "   program: a TensorFlow-like client: dlopen(libcudnn.so.9) + dlsym, cudnnCreate, a convolution"
echo
env LD_LIBRARY_PATH=$D/cudnn9:$D/cudart:$D/cuda:$D/nvml CGTEST_GPU_TOTAL_MB=1024 CGTEST_GPU_HELD_MB=1020 \
    CGTEST_HOLDER_PID=$HOLDER \
    "$B/convguard" run --dir "$OUT" -- "$B/clients/client_tflike" > "$OUT/program.out" 2>&1
rc=$?
echo "== the program's own view (first lines):"
grep -E '^(cudnn|cuda)' "$OUT/program.out" | head -6 | sed 's/^/   /'
echo
echo "== convguard report $OUT"
"$B/convguard" report "$OUT"
echo
echo "(traces kept in $OUT; the program exited with status $rc)"
