# t_capture_report.sh - the report quotes the program's own error lines from the
# captured stderr: only lines holding a known framework/CUDA error text
# (tools/model/patterns.def) and the final exception line, nothing else it printed;
# templates only for traces without a capture; each rank's lines for that rank
# (torchrun's "[rankN]:" and srun's "N: " prefixes); a capture belongs to its run.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
D=$DOUBLES
TF=$CLIENTS/client_tflike
[ -x "$TF" ] && [ -e "$D/cudnn9/libcudnn.so.9" ] || skip_all "test doubles missing (make test builds them)"
cd "$WORK"
NODRV="LD_LIBRARY_PATH=$D/cudnn9:$D/cudart" # cuDNN and cudart, no driver: cudnnCreate fails
GLOG="E0000 00:00:1796166831.068002   11218"

# a program that fails without a driver and prints a framework's log, noise, a
# secret and a chained Python traceback
cat > fail.sh <<EOF
env $NODRV "$TF" >/dev/null 2>&1
printf 'loading the model from /home/alice/model.ckpt\n' >&2
printf 'API_KEY=sk-secret-1234 HF_TOKEN=hf_secret\n' >&2
printf '\033[31m$GLOG cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\033[0m\n' >&2
printf 'epoch 1: 10%%\repoch 1: 20%%\r' >&2
printf 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    load()\nValueError: first problem\n\nDuring handling of the above exception, another exception occurred:\n\n' >&2
printf 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    model(x)\n    ^^^^^^^^\n' >&2
printf 'tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above. [Op:Conv2D]\n' >&2
printf 'a line after the exception: password=hunter2\n' >&2
exit 1
EOF
"$CG" run --dir "$WORK/a" -- bash fail.sh 2> a.err
check "the program's exit status (1)" test $? = 1
sed -n '/^convguard report/,$p' a.err > a.report
check "the report follows the program's own output" grep -q "no NVIDIA driver" a.report
check "you see: the framework's log line (without colours and glog stamp)" \
    grep -qF '"cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED"' a.report
check "you see: the exception line of the last traceback, not the first" \
    bash -c "tr -s ' \n' '  ' < a.report | grep -qF 'tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm' && ! grep -q 'first problem' a.report"
check "no template words of another framework (PyTorch, JAX) in 'you see'" \
    bash -c "! sed -n '/you see:/,/cause:/p' a.report | grep -qE 'PyTorch|JAX'"
for secret in alice sk-secret hf_secret hunter2 "epoch 1"; do
    check "nothing else it printed is quoted: '$secret'" bash -c "! grep -q '$secret' a.report"
done
"$CG" report --json "$WORK/a" > a.json
check "report DIR later: the same lines, you_see_source stderr" \
    jq -e '.findings[0].you_see_source == "stderr" and (.findings[0].symptom | contains("Could not create cudnn handle"))' a.json
check "--json: the process's captured lines, which are quoted, and nothing secret" \
    bash -c "jq -e '[.processes[] | select(.program == \"client_tflike\") | .captured.lines[] | select(.quoted)] | length == 2' a.json && ! grep -qE 'hunter2|sk-secret|alice' a.json"
check "the rule can read the lines: output events with pattern ids" \
    jq -e '[.processes[].captured.lines[]?.pattern] | index("tf_cudnn_handle") != null and index("tf_conv_algo") != null' a.json

# the same failure without capture: the rule's template
"$CG" run --no-capture --dir "$WORK/b" -- bash fail.sh 2> b.err
# (client_tflike is a C program with no framework: the template says so, then the frameworks' words)
check "--no-capture: no capture file, the template stays" \
    bash -c "! ls '$WORK/b'/*.stderr 2>/dev/null && tr '\n' ' ' <b.err | tr -s ' ' | grep -q 'you see: client_tflike (no framework seen) gets the status its own calls returned .* a framework would print: TensorFlow: '"
"$CG" report --json "$WORK/b" > b.json
check "--no-capture: you_see_source template" jq -e '.findings[0].you_see_source == "template"' b.json
mkdir -p "$WORK/c"
env $NODRV CONVGUARD_DIR="$WORK/c" LD_PRELOAD="$SHIM" "$TF" >/dev/null 2>&1
"$CG" report "$WORK/c" > c.report
check "the shim preloaded by hand (no capture): the template" \
    bash -c "tr '\n' ' ' <c.report | tr -s ' ' | grep -q 'you see: client_tflike (no framework seen) .* TensorFlow: '"

# a program that printed nothing known
"$CG" run --dir "$WORK/q" -- bash -c "env $NODRV '$TF' >/dev/null 2>&1; echo 'all fine here, token=abc' >&2; exit 1" 2> q.err
check "nothing quotable: says so, quotes nothing" \
    bash -c "grep -q 'you see: no error text of a framework or of CUDA on stderr' q.err && ! sed -n '/^convguard report/,\$p' q.err | grep -q token"

# a capture belongs to its own run: an older run's lines in the same folder are not quoted
"$CG" run --dir "$WORK/a" -- bash -c "env $NODRV '$TF' >/dev/null 2>&1; exit 2" 2> a2.err
check "a later run in the same folder: not the earlier run's lines" \
    bash -c "grep -q 'you see: no error text' a2.err && ! grep -q 'Could not create cudnn handle' a2.err"

# ---- ranks: each process quotes its own rank's lines
cat > ranks.sh <<EOF
RANK=0 LOCAL_RANK=0 env LD_LIBRARY_PATH=$D/cudnn9:$D/cudart:$D/cuda CGTEST_GPU_HELD_MB=1020 "$TF" >/dev/null 2>&1
RANK=1 LOCAL_RANK=1 env $NODRV "$TF" >/dev/null 2>&1
p() { printf '%s\n' "\$@" >&2; }
p '[rank1]: Traceback (most recent call last):' '[rank1]:   File "train.py", line 9, in <module>' \
  '[rank1]: RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED'
p '[rank0]: Traceback (most recent call last):' '[rank0]:   File "train.py", line 9, in <module>' \
  '[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 MiB.'
p '[rank0]:[W1201 12:00:00.000000 ProcessGroupNCCL.cpp:1500] Warning: WorkNCCL timed out'
for i in \$(seq 200); do p "[rank0]: noise line \$i"; done
p 'Traceback (most recent call last):' '  File "/usr/bin/torchrun", line 8, in <module>' \
  'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: '
exit 1
EOF
"$CG" run --dir "$WORK/r" -- bash ranks.sh 2> r.err
"$CG" report --json "$WORK/r" > r.json
C=$(ls "$WORK/r"/*.stderr)
check "torchrun prefixes: the capture keeps a section per rank" \
    bash -c "head -1 '$C' | jq -e '[.sections[].name] == [\"tail\", \"rank 1\", \"rank 0\"]'"
check "rank 1 reads its own lines: its cuDNN error, not rank 0's OOM" \
    jq -e '[.processes[] | select(.rank == 1) | .captured | .stream == "rank 1" and ([.lines[].text] | any(contains("CUDNN_STATUS_NOT_INITIALIZED")) and all(contains("out of memory") | not))] | length > 0 and all' r.json
check "rank 0 reads its own lines: the OOM" \
    jq -e '[.processes[] | select(.rank == 0) | .captured.lines[] | select(.exception) | .text] | unique == ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 MiB."]' r.json
check "rank 1's finding (no driver) quotes rank 1's words, naming the rank" \
    jq -e '[.findings[] | select(.rule == "handle_no_driver") | .symptom] == ["\"RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\" (rank 1)"]' r.json
check "the launcher's ChildFailedError is not taken for the exception of the whole run" \
    bash -c "! jq -r '.findings[].symptom' r.json | grep -q ChildFailedError"

# srun --label: "N: " in front of (nearly) every line
cat > srun.sh <<EOF
SLURM_PROCID=3 env $NODRV "$TF" >/dev/null 2>&1
printf '%s\n' '3: Traceback (most recent call last):' '3:   File "train.py", line 2, in <module>' \
  '3: jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.' \
  '0: step 100 loss 0.1' '0: 12: not a rank prefix' >&2
exit 1
EOF
"$CG" run --dir "$WORK/s" -- bash srun.sh 2> s.err
"$CG" report --json "$WORK/s" > s.json
check "srun labels: task 3's trace quotes task 3's lines" \
    jq -e '[.findings[] | select(.rule == "handle_no_driver") | .symptom] == ["\"jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.\" (rank 3)"]' s.json
"$CG" run --dir "$WORK/s2" -- bash -c "env $NODRV '$TF' >/dev/null 2>&1; printf '1: one\nplain\nplain\nplain\n' >&2; exit 1" 2>/dev/null
check "a few 'N: ' lines among plain ones are not taken for srun labels" \
    bash -c "head -1 '$(ls "$WORK/s2"/*.stderr)' | jq -e '.sections | length == 1'"

# ---- damaged or hostile capture files: read what is whole, never crash
H="$WORK/h"
mkdir -p "$H"
cp "$ROOT/tests/report/traces/pool_exhausted.jsonl" "$H/"
pid=$(head -1 "$H/pool_exhausted.jsonl" | jq .ppid)
start=$(head -1 "$H/pool_exhausted.jsonl" | jq .wall_time)
hdr() { printf '{"convguard_capture":1,"host":"vm","pid":1,"child":%s,"start":%s,"end":%s,"mode":"pipe","bytes":9,"sections":%s}\n' "$pid" "$((start - 1))" "$((start + 5))" "$1"; }
bad=0
for k in 1 2 3 4 5 6 7; do
    rm -f "$H"/*.stderr
    case $k in
    1) hdr '[{"name":"tail","bytes":99999}]' > "$H/x.stderr"; printf 'RuntimeError: short' >> "$H/x.stderr" ;;
    2) printf '{"convguard_capture":1,"host":' > "$H/x.stderr" ;;
    3) hdr '"not an array"' > "$H/x.stderr" ;;
    4) hdr '[{"name":7,"bytes":"x"},{"bytes":-5}]' > "$H/x.stderr" ;;
    5) { hdr '[{"name":"tail","bytes":64}]'; head -c 64 /dev/urandom; } > "$H/x.stderr" ;;
    6) { hdr '[{"name":"tail","bytes":40000}]'; printf 'Traceback (most recent call last):\n'; head -c 39965 /dev/zero | tr '\0' 'x'; } > "$H/x.stderr" ;;
    7) printf 'not json at all\nRuntimeError: CUDA out of memory\n' > "$H/x.stderr" ;;
    esac
    "$CG" report --json "$H" > "$WORK/h$k.json" 2>/dev/null
    rc=$?
    [ $rc -le 1 ] && jq -e . "$WORK/h$k.json" >/dev/null || { bad=$((bad + 1)); echo "  (damaged capture $k: exit $rc)"; }
done
{ hdr '[{"name":"tail","bytes":58}]'; printf 'jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of mem\n'; } > "$H/x.stderr"
"$CG" report --json "$H" > "$WORK/h8.json"
check "(the same folder with a whole capture: it is read, the pool rule matches)" \
    jq -e '.findings[0].rule == "pool_exhausted"' "$WORK/h8.json"
check "damaged capture files (cut, not JSON, wrong types, binary, a 40 KB line): the report still works" test $bad = 0
check "a capture cut short quotes nothing from the missing part" \
    bash -c "! grep -q 'RuntimeError: short' '$WORK/h1.json'"
finish
