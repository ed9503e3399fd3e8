# t_readme.sh - every command line of README.md's ```sh blocks works as
# written (issue 29): run in a temporary folder, `convguard` and `python` on
# PATH, the test doubles where a GPU is needed, /shared/ a folder under it;
# fails on a usage error, an unknown command or option, or a Python traceback.
# The lines that need the network, Slurm, an MPI or a GPU are skipped, each
# with its reason, from the short list below (SKIP); a README line that
# matches none of them runs.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
[ -x "$CG" ] && [ -e "$SHIM_SO" ] || skip_all "CLI or shim not built"
command -v python3 >/dev/null || skip_all "no python3"
PY=$(python3 -c 'import sys; print(sys.executable)')

# pattern (a bash glob on the line) | why it is not run here
SKIP=(
    'pip install*|needs the network (PyPI) or a built wheel'
    'make wheel*|needs zig from PyPI (the network)'
    'apt-get*|needs the network and root'
    'make test|the whole suite, which runs this file'
    'make test-tf*|downloads TensorFlow from PyPI (about 6 GB)'
    '*srun *|needs Slurm'
    'sbatch *|needs Slurm (tests/slurm/t_slurm.sh runs it on a cluster of its own)'
    '*torchrun *|needs torchrun (PyTorch)'
    'mpirun *|needs an MPI'
)

# ---- the world the README assumes: convguard and python on PATH, a train.py that touches cuDNN
mkdir -p "$WORK/bin" "$WORK/home" "$WORK/run" "$WORK/shared/cg"
ln -s "$CG" "$WORK/bin/convguard"
ln -s "$PY" "$WORK/bin/python"
cat >"$WORK/run/train.py" <<'EOF'
# a stand-in for a training script: cuDNN (the test double) loaded and a handle made
import ctypes, sys, time
lib = ctypes.CDLL("libcudnn.so.9")
h = ctypes.c_void_p()
print("cudnnCreate ->", lib.cudnnCreate(ctypes.byref(h)))
if "--wait" in sys.argv:
    time.sleep(60)
EOF
export PATH=$WORK/bin:$PATH HOME=$WORK/home TMPDIR=$WORK PYTHONPATH=$ROOT/python SLURM_JOB_ID=42
export LD_LIBRARY_PATH=$DOUBLES/cudnn9:$DOUBLES/cudart:$DOUBLES/cuda:$DOUBLES/nvml CGTEST_GPU_TOTAL_MB=1024
unset CONVGUARD_DIR
# what the skipped srun line would have left: a job's traces in /shared/cg/$SLURM_JOB_ID
(cd "$WORK/run" && CONVGUARD_DIR=$WORK/shared/cg/42 convguard run --quiet -- python train.py >/dev/null 2>&1)
# a job that is already running (README: convguard inspect $(pgrep -f train.py)), under convguard run:
# pgrep -f finds run, its signal relay and the program
(cd "$WORK/run" && exec convguard run --quiet --dir "$WORK/waiting" -- python train.py --wait >/dev/null 2>&1) &
TRAIN=$!
trap 'kill $TRAIN 2>/dev/null; rm -rf "$WORK"' EXIT

# ---- the command lines: ```sh blocks, continuation lines joined, comments dropped
awk '/^```sh/ {on = 1; next} /^```/ {on = 0} on' "$ROOT/README.md" |
    sed -e 's/[[:space:]]#[^`]*$//' -e '/^[[:space:]]*#/d' -e 's/[[:space:]]*$//' -e '/^$/d' |
    awk '{ if (sub(/\\$/, "")) { buf = buf $0; next } print buf $0; buf = "" }' >"$WORK/lines"
check "README.md has command lines in its sh blocks" test "$(wc -l <"$WORK/lines")" -gt 10
for _ in $(seq 100); do [ "$(pgrep -f 'train.py --wait' | wc -l)" -ge 3 ] && break; sleep 0.05; done

ran=0
skipped=()
while IFS= read -r line; do
    why=""
    for s in "${SKIP[@]}"; do
        # shellcheck disable=SC2053
        [[ $line == ${s%%|*} ]] && why=${s#*|} && break
    done
    if [ -n "$why" ]; then
        skipped+=("$line  ($why)")
        continue
    fi
    cmd=${line//\/shared\//$WORK/shared/}
    where=$WORK/run
    case $cmd in make\ *) where=$ROOT ;; esac # make runs in the checkout, its outputs in TMPDIR
    out=$(cd "$where" && timeout 120 bash -c "$cmd" 2>&1 </dev/null)
    rc=$?
    ran=$((ran + 1))
    bad=""
    grep -qE '^usage: |unrecognized option|invalid option|unknown command|command not found' <<<"$out" && bad="a usage error"
    grep -q 'Traceback (most recent call last)' <<<"$out" && bad="a Python traceback"
    grep -qE 'pip install convguard([ )`]|$)' <<<"$out" && bad="'pip install convguard' (not on PyPI)"
    [ $rc = 124 ] && bad="a timeout"
    if [ -n "$bad" ]; then
        fail "README line '$line': $bad (exit $rc): $(head -c 400 <<<"$out")"
    else
        pass "README line '$line' (exit $rc)"
    fi
done <"$WORK/lines"
check "README lines ran ($ran ran, ${#skipped[@]} skipped)" test "$ran" -ge 10
for s in "${skipped[@]}"; do echo "  skip $TEST_NAME: $s"; done
finish
