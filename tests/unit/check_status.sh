# check_status.sh - shim/status.def, the one table of status names, is right and complete:
# each line's name and value as in NVIDIA's headers (check_status.c), and every enumerator of
# CUresult, cudaError_t and cuDNN's cudnnStatus_t that the headers give a number has that number
# in the table, under its library.
source "$(dirname "$0")/../lib.sh"
INC=${CUDA_INC:-/usr/local/cuda/include}
[ -x "$UNIT/check_status" ] || skip_all "no CUDA/cuDNN headers in $INC"
DEF=$ROOT/shim/status.def
out=$("$UNIT/check_status")
check "status.def names and values match the headers ($(echo "$out" | tail -1))" "$UNIT/check_status"
# name value pairs of one enum, from the line that opens it to the one that closes it
enum_of() { awk -v a="$2" -v b="$3" '$0 ~ a {on=1} on {print} on && $0 ~ b {exit}' "$INC/$1" |
    grep -oE '^\s*[A-Za-z_][A-Za-z_0-9]*( CUDNN_DEPRECATED_ENUM)?\s*=\s*[0-9]+' | awk '{print $1, $NF}'; }
covered() { # lib file start end: every numbered enumerator's value is in the table under lib
    local n=0 name v
    while read -r name v; do
        n=$((n + 1))
        grep -q "^CG_STATUS($1, $v, " "$DEF" || echo " $name=$v" >> "$WORK/missing"
    done < <(enum_of "$2" "$3" "$4")
    echo $n
}
n_cu=$(covered CU cuda.h '^typedef enum cudaError_enum' '} CUresult;')
n_rt=$(covered RT driver_types.h '^enum __device_builtin__ cudaError' '^};')
n_dnn=0
[ -e "$INC/cudnn_graph.h" ] && n_dnn=$(covered DNN9 cudnn_graph.h 'CUDNN_STATUS_SUCCESS' 'cudnnStatus_t;')
missing=$(cat "$WORK/missing" 2>/dev/null | tr -d '\n')
check "every status of the headers is in status.def ($n_cu CUresult, $n_rt cudaError_t, $n_dnn cuDNN 9)${missing:+ (missing:$missing)}" \
    bash -c "[ -z '$missing' ] && [ $n_cu -gt 90 ] && [ $n_rt -gt 90 ] && [ $n_dnn -gt 40 ]"
check "222 is CUDA_ERROR_UNSUPPORTED_PTX_VERSION and cudaErrorUnsupportedPtxVersion" bash -c \
    "grep -qx 'CG_STATUS(CU, 222, CUDA_ERROR_UNSUPPORTED_PTX_VERSION)' '$DEF' && grep -qx 'CG_STATUS(RT, 222, cudaErrorUnsupportedPtxVersion)' '$DEF'"
check "one name per value and library" bash -c "[ -z \"\$(grep -oE '^CG_STATUS\([A-Z0-9]+, [0-9]+' '$DEF' | sort | uniq -d)\" ]"
# the CLI reads the same table: a trace event without status_name gets it from there
printf '%s\n' '{"ev":"start","seq":0,"t":0,"pid":1,"tid":1}' \
    '{"ev":"call_failed","seq":1,"t":0,"pid":1,"tid":1,"fn":"cuModuleLoadData","status":222}' > "$WORK/t.jsonl"
"$BUILD_DIR/convguard" report "$WORK/t.jsonl" > "$WORK/r" 2>&1
check "the report names 222 from the same table" grep -q "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)" "$WORK/r"
finish
