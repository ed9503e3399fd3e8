#!/usr/bin/env bash
# tests/tf/run.sh - real TensorFlow with and without the shim (make test-tf).
#
# TensorFlow defines the CUDA entry points itself (libtensorflow_framework.so.2:
# cuInit, cudaMalloc, cudnnCreate, ...) and loads the CUDA libraries on the
# first call; under the shim every one of those calls must reach what it
# reaches without it (issue 13).  tests/tf/keras_conv.py (a Keras Conv2D model,
# 2 training steps) runs twice in each setup, without and with
# LD_PRELOAD=libconvguard.so, and the two runs must agree on: the exit status,
# stdout, TensorFlow's own log lines (timestamps and pids taken out, the
# shim's own "convguard:" lines left out), and the shared objects mapped at the
# end (libconvguard.so the only one added).  Setups:
#   nodriver   no libcuda.so.1 anywhere (this machine, CI)
#   double     the libcuda.so.1 test double first in LD_LIBRARY_PATH
#   hidden     CUDA_VISIBLE_DEVICES=""
# Then `convguard report` of the no-driver run must quote TensorFlow 2.21's
# own words for it ("failed call to cuInit: ... UNKNOWN ERROR (303)").
#
# The venv: $TF_VENV if it holds tensorflow $TF_VERSION (e.g. TF_VENV=/opt/tfvenv),
# else build/tfvenv, made and filled from PyPI (tensorflow[and-cuda]==$TF_VERSION,
# about 90 s and 3 GB) when it does not hold it yet.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
TF_VERSION=${TF_VERSION:-2.21.0}
VENV=${TF_VENV:-$ROOT/build/tfvenv}
PY=$VENV/bin/python
# CONVGUARD_BIN=…/bin/convguard: another command (the wheel's: make test-tf-wheel), with its shim
CLI=${CONVGUARD_BIN:-$ROOT/build/convguard}
[ -n "${CONVGUARD_BIN:-}" ] && [ -z "${SHIM:-}" ] && SHIM=$("$CLI" shim-path)
SHIM=${SHIM:-$ROOT/build/libconvguard.so} # SHIM=other/libconvguard.so: compare another build
[ -e "$SHIM" ] && [ -x "$CLI" ] && [ -e "$ROOT/build/doubles/cuda/libcuda.so.1" ] || { echo "test-tf: run make first"; exit 2; }

has_tf() { "$PY" -c "import tensorflow as t, sys; sys.exit(t.__version__ != '$TF_VERSION')" >/dev/null 2>&1; }
if ! has_tf; then
    echo "test-tf: installing tensorflow[and-cuda]==$TF_VERSION into $VENV from PyPI: about 6 GB to download"
    echo "test-tf: (once; TF_VENV=/path/to/a/venv with tensorflow $TF_VERSION reuses one instead)"
    # pip's own progress bars (no -q): a few minutes of download show as such, not as a hang
    { [ -x "$PY" ] || python3 -m venv "$VENV"; } &&
        "$PY" -m pip install --disable-pip-version-check --progress-bar on "tensorflow[and-cuda]==$TF_VERSION" &&
        has_tf || { echo "FAIL test-tf: could not install tensorflow $TF_VERSION into $VENV"; exit 1; }
fi
echo "test-tf: $("$PY" -c 'import tensorflow as t; print("tensorflow", t.__version__, "at", t.__file__)' 2>/dev/null)"

W=$(mktemp -d "${TMPDIR:-/tmp}/cg-test-tf.XXXXXX")
trap 'rm -rf "$W"' EXIT
FAILED=0
PASSED=0
ok() { PASSED=$((PASSED + 1)); echo "  ok   test-tf: $*"; }
bad() { FAILED=$((FAILED + 1)); echo "  FAIL test-tf: $*"; }

# TensorFlow's log lines without what changes from run to run: absl's
# "E0000 00:00:1796168302.876047   17933 file.cc:52] ..." (seconds since the
# epoch while absl's log is not set up, else hh:mm:ss) and the older
# "2025-01-01 12:00:00.123456: E file.cc:52] ..." prefixes; the shim's lines out
tf_log() {
    grep -v '^convguard:' "$1" |
        sed -E 's/^([IWEF])[0-9]{4} [0-9]+:[0-9]+:[0-9]+\.[0-9]+ +[0-9]+ /\1 /;
                s/^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+: //'
}

setup() { # NAME VAR=VALUE...
    local name=$1; shift
    local d=$W/$name
    mkdir -p "$d/traces"
    env "$@" CG_MAPS_OUT="$d/maps.plain" "$PY" tests/tf/keras_conv.py > "$d/out.plain" 2> "$d/err.plain"
    local rp=$?
    env "$@" CG_MAPS_OUT="$d/maps.shim" CONVGUARD_DIR="$d/traces" LD_PRELOAD="$SHIM" \
        "$PY" tests/tf/keras_conv.py > "$d/out.shim" 2> "$d/err.shim"
    local rs=$?
    echo "-- $name ($*): exit $rp without the shim, $rs with it; $(grep '^gpus\|^steps' "$d/out.plain" | tr '\n' ' ')"
    tf_log "$d/err.plain" > "$d/log.plain"
    tf_log "$d/err.shim" > "$d/log.shim"
    grep -i 'cuInit\|cuda_platform\|cuda_diagnostics\|libcuda' "$d/log.plain" | head -3 | cut -c1-200 | sed 's/^/   TensorFlow: /'
    [ $rp = $rs ] && ok "$name: exit status the same ($rp)" || bad "$name: exit status $rp without, $rs with the shim"
    [ $rp = 0 ] && ok "$name: the model trained" || { bad "$name: the model did not run"; tail -5 "$d/err.plain"; }
    if diff "$d/out.plain" "$d/out.shim" >/dev/null; then ok "$name: stdout the same"; else
        bad "$name: stdout differs"; diff "$d/out.plain" "$d/out.shim" | head -10; fi
    if diff "$d/log.plain" "$d/log.shim" >/dev/null; then ok "$name: TensorFlow's log lines the same ($(wc -l < "$d/log.plain"))"; else
        bad "$name: TensorFlow's log lines differ"; diff "$d/log.plain" "$d/log.shim" | head -10 | cut -c1-200; fi
    local added
    added=$(comm -13 "$d/maps.plain" "$d/maps.shim" | tr '\n' ' ')
    if [ -s "$d/maps.plain" ] && [ -z "$(comm -23 "$d/maps.plain" "$d/maps.shim")" ] &&
        [ "$added" = "$(readlink -f "$SHIM") " ]; then
        ok "$name: the same $(wc -l < "$d/maps.plain") shared objects mapped, libconvguard.so the only one added"
    else
        bad "$name: shared objects differ: added: $added; missing: $(comm -23 "$d/maps.plain" "$d/maps.shim" | tr '\n' ' ')"
    fi
    local t
    t=$(ls "$d"/traces/*.jsonl 2>/dev/null | head -1)
    if [ -n "$t" ] && jq -R -n -e '[inputs | try (fromjson | type == "object") catch false] | length > 0 and all' "$t" >/dev/null; then
        ok "$name: a trace, every line one JSON object"
    else
        bad "$name: no valid trace in $d/traces"
    fi
}

setup nodriver LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"
setup double LD_LIBRARY_PATH="$ROOT/build/doubles/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
setup hidden CUDA_VISIBLE_DEVICES=

# The no-driver run: TensorFlow's own cuInit status (303), not one of the
# shim's, and the report quotes TensorFlow 2.21's words for it
d=$W/nodriver
if grep -q 'failed call to cuInit: .*UNKNOWN ERROR (303)' "$d/log.shim"; then
    ok "nodriver: TensorFlow's own cuInit status under the shim: $(grep -o 'failed call to cuInit: .*' "$d/log.shim" | head -1)"
else
    bad "nodriver: TensorFlow did not log its cuInit status 303 under the shim: $(grep -i cuinit "$d/log.shim" | head -1)"
fi
"$CLI" report "$d/traces" > "$d/report" 2>&1
sed 's/^/   /' "$d/report"
if tr -s ' \n' '  ' < "$d/report" | grep -q 'failed call to cuInit: .*UNKNOWN ERROR (303)' && grep -q 'no NVIDIA driver' "$d/report"; then
    ok "nodriver: the report says no driver and quotes TensorFlow 2.21's words"
else
    bad "nodriver: the report does not quote TensorFlow 2.21's \"failed call to cuInit: ... UNKNOWN ERROR (303)\""
fi
# under `convguard run`: the report quotes the cuInit line TensorFlow printed, from its captured stderr (issue 20)
TF_VENV=$VENV bash tests/report/t_capture_tf.sh && ok "convguard run: tests/report/t_capture_tf.sh" ||
    bad "convguard run: tests/report/t_capture_tf.sh"
echo "test-tf: $PASSED passed, $FAILED failed"
[ $FAILED = 0 ]
