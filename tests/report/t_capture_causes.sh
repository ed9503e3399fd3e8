# t_capture_causes.sh - a Python program that drives the test doubles into a
# failure and then prints/raises a framework's own error (exact texts:
# tests/report/framework_says.py), under `convguard run`: the report names the
# matching cause and "you see" quotes the program's own exception line.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
S=$ROOT/tests/report/framework_says.py
command -v python3 >/dev/null || skip_all "no python3 (.ci/run installs it)"
[ -x "$CLIENTS/client_tflike" ] && [ -x "$CLIENTS/client_memroutes" ] || skip_all "test clients missing (make test builds them)"
# the interpreter itself, not a wrapper script (pyenv): one traced process
PY=$(python3 -c 'import sys; print(sys.executable)')

# scenario: the rule named first, a word of its cause
declare -A WANT=(
    [torch_no_engine]="conv_no_algorithm:every candidate"
    [torch_no_valid_algo]="lookup_workspace:the smallest, IMPLICIT_GEMM, needs a 32 MiB workspace, but only 16 MiB"
    [torch_cudnn_status]="handle_no_driver:no NVIDIA driver"
    [torch_oom]="lookup_workspace:which needs a 512 MiB workspace, but only 16 MiB"
    [torch_oom_limit]="pool_exhausted:PyTorch reports out of memory but no GPU allocation of this process failed"
    [tf_conv_algo]="handle_out_of_memory:only 4 MiB of 1.0 GiB"
    [tf_cuinit]="handle_no_driver:no NVIDIA driver"
    [tf_cudnn_handle]="own_pool_took_memory:this process holds 1018 MiB in one allocation"
    [tf_dnn_not_found]="load_cudnn_sublib_failed:libcudnn_cnn_infer.so.8"
    [jax_dnn_init]="own_pool_took_memory:this process holds"
    [jax_resource_exhausted]="pool_exhausted:JAX/XLA reports out of memory but no GPU allocation of this process failed"
    [xla_hlo_config]="conv_workspace_exceeds_free:needs a workspace of at least"
    [xla_cudnn_version]="cudnn_older_than_build:built with cuDNN 9.8.0 but cuDNN 9.1.0 was loaded"
    [torch_cudnn_version]="cudnn_older_than_build:PyTorch was built with cuDNN 9.8.0 but cuDNN 9.1.0 was loaded"
)
n=0
for s in $(python3 "$S" "$BUILD_DIR" list); do
    n=$((n + 1))
    want=${WANT[$s]:-}
    [ -n "$want" ] || { fail "$s: no expectation in WANT"; continue; }
    rule=${want%%:*} says=${want#*:}
    "$CG" run --dir "$WORK/$s" -- "$PY" "$S" "$BUILD_DIR" "$s" > /dev/null 2> "$WORK/$s.err"
    "$CG" report --json "$WORK/$s" > "$WORK/$s.json"
    check "$s: the cause is $rule" jq -e --arg r "$rule" '.findings[0].rule == $r' "$WORK/$s.json"
    check "$s: ... and says '$says'" jq -e --arg w "$says" '.findings[0].cause | contains($w)' "$WORK/$s.json"
    # the last line of the traceback (or the log line) exactly as the program printed it
    last=$(grep -E '^[A-Za-z_.]+(Error|Exception): |failed call to cuInit' "$WORK/$s.err" | tail -1)
    last=${last#*] } # a glog line is quoted from its source location on
    check "$s: you see quotes the program's own line" \
        jq -e --arg l "${last:0:200}" '.findings[0].you_see_source == "stderr" and (.findings[0].symptom | contains($l))' "$WORK/$s.json"
    check "$s: ... and the text report shows it" bash -c "tr -s ' \n' '  ' < '$WORK/$s.err' | grep -qF -- 'you see: \"'"
done
check "every scenario ran ($n)" test $n -ge 14
finish
