# t_capture_tf.sh - real TensorFlow (2.21, in the venv $TF_VENV, else /opt/tfvenv or
# the build/tfvenv `make test-tf` makes; also run by make test-tf) under
# `convguard run` on a machine without an NVIDIA driver: the
# report quotes TensorFlow's own "failed call to cuInit" line, as TensorFlow
# printed it, and names the missing driver.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
VENV=${TF_VENV:-}
[ -n "$VENV" ] || for v in /opt/tfvenv "$ROOT/build/tfvenv"; do [ -x "$v/bin/python" ] && VENV=$v && break; done
PY=$VENV/bin/python
[ -x "$PY" ] && "$PY" -c 'import tensorflow' >/dev/null 2>&1 ||
    skip_all "no TensorFlow in ${VENV:-/opt/tfvenv or build/tfvenv} (set TF_VENV to a venv with tensorflow==2.21.0; make test-tf makes one)"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    skip_all "this machine has an NVIDIA driver: TensorFlow's cuInit does not fail here"
fi
cat > "$WORK/conv.py" <<'PY'
import tensorflow as tf
x = tf.random.normal([1, 8, 8, 3])
print(tf.keras.layers.Conv2D(4, 3)(x).shape)
PY
"$CG" run --dir "$WORK/d" -- "$PY" "$WORK/conv.py" > "$WORK/out" 2> "$WORK/err"
check "TensorFlow ran (on the CPU) and printed its result" grep -q '(1, 6, 6, 4)' "$WORK/out"
line=$(grep -v '^convguard' "$WORK/err" | grep -m1 'failed call to cuInit')
check "TensorFlow printed its cuInit line through convguard" test -n "$line"
# quoted from the source location on: without glog's "E0000 00:00:<time>  <pid> " stamp
want=$(printf '%s\n' "$line" | sed -E 's/^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ //')
"$CG" report --json "$WORK/d" > "$WORK/j"
check "the report's 'you see' is TensorFlow's own line: $want" \
    jq -e --arg l "$want" '[.findings[] | select(.you_see_source == "stderr" and (.symptom | contains("\"" + $l + "\"")))] | length > 0' "$WORK/j"
check "... for the missing driver" jq -e '.findings[0].cause | startswith("no NVIDIA driver")' "$WORK/j"
check "the report convguard run printed quotes it too" bash -c "tr -s ' \n' '  ' < '$WORK/err' | grep -qF -- 'you see: \"cuda_platform.cc'"
check "no template of another framework in it" bash -c "! grep -A2 'you see:' '$WORK/err' | grep -qE 'PyTorch|JAX'"
finish
