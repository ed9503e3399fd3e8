# t_messages.sh - the table of known error texts (tools/model/patterns.def):
# every row has a source thread and (benign and evidence rows aside) a corpus
# case p-<id>; a fix's framework parts name one framework each (a process is
# shown only its own); benign lines are never quoted nor a finding; and the
# order of the rows decides: a build with two rows swapped gets the case wrong.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
R=$ROOT/tests/report
P=$ROOT/tools/model/patterns.def
command -v python3 >/dev/null || skip_all "no python3 (.ci/run installs it)"

# ---- the rows
# the rows of before issue 27 (their texts are exercised by t_capture_causes.sh's scenarios)
OLDER="cublas_status cuda_driver_error cuda_driver_insufficient cuda_driver_oom cuda_error cuda_error_oom cuda_no_device cuda_no_kernel_image cudart_error cudart_oom cudnn_invalid_handle cudnn_load_library cudnn_status cudnn_unable_load jax_backend jax_no_devices nvml_mismatch tf_cannot_dlopen tf_conv_algo tf_cudnn_handle tf_cuinit tf_dnn_not_found tf_launch tf_load_dso tf_memory_usage tf_no_algo tf_oom_tensor torch_cuda_init torch_cudnn_version torch_driver_old torch_no_driver torch_no_engine torch_no_valid_algo torch_oom torch_oom_error xla_cubin xla_cudnn_version xla_dnn_init xla_driver_version xla_hlo_config xla_oom xla_ptxas_version xla_resource_exhausted"
python3 - "$P" "$R/corpus" "$OLDER" >"$WORK/rows" 2>&1 <<'EOF'
import os, re, sys
OLDER = set(sys.argv[3].split())
text = open(sys.argv[1]).read()
bad = 0
rows = re.findall(r'^MESSAGE\((\w+), "(\w+)", "([^"]*)",(.*?)\)\n', text, re.S | re.M)
cases = {}
for d in os.listdir(sys.argv[2]):
    e = os.path.join(sys.argv[2], d, "expect")
    if os.path.exists(e):
        for line in open(e):
            if line.startswith("message: "):
                cases[line.split(": ", 1)[1].strip()] = d
for mid, kind, fw, rest in rows:
    lits = re.findall(r'"((?:[^"\\]|\\.)*)"', rest)
    src = lits[-1]
    if not re.match(r'https://(github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+|stackoverflow\.com/)', src):
        print("no source thread:", mid); bad += 1
    if kind not in ("benign", "memory", "status") and "p-" + mid.replace("_", "-") not in cases.values() and mid not in OLDER:
        print("no corpus case:", mid); bad += 1
    # the fix: the literals between title/cause and confirm; parts split at "; "
    joined = re.sub(r'"\s*\n\s*"', "", rest)
    fields = re.findall(r'"((?:[^"\\]|\\.)*)"', joined)
    if len(fields) != 6:
        print("not 9 fields:", mid, len(fields)); bad += 1
        continue
    fix = fields[3]
    for part in fix.split("; "):
        for label in ("PyTorch:", "TensorFlow:", "JAX:", "CuPy:"):
            if label in part and not part.startswith(label):
                print("framework knob inside a general part:", mid, repr(part)); bad += 1
print("rows", len(rows), "cases", len(cases), "bad", bad)
EOF
sed 's/^/    /' "$WORK/rows"
check "every row has a source thread, 9 fields, a corpus case (new rows), and framework knobs only in that framework's part" \
    grep -q "bad 0$" "$WORK/rows"
check "at least 60 message families beyond the 43 of before" bash -c "[ \$(grep -c '^MESSAGE(' '$P') -ge 103 ]"
check "every corpus case's message is a row of patterns.def" bash -c \
    "for m in \$(sed -n 's/^message: //p' '$R'/corpus/*/expect); do grep -q \"^MESSAGE(\$m,\" '$P' || exit 1; done"

# ---- benign lines: a run that printed only warnings that read like errors
mkcase() { # DIR LINES...: a TensorFlow process with the GPU, and its capture
    local d=$1; shift
    mkdir -p "$d"
    printf '%s\n' "$@" >"$d/body"
    local n; n=$(wc -c <"$d/body")
    cat >"$d/gpu9-5001.jsonl" <<J
{"ev":"start","seq":0,"t":0.01,"pid":5001,"tid":5001,"convguard":"0.1.0","ppid":5000,"exe":"/usr/bin/python3","argv":["python3","t.py"],"cwd":"/","host":"gpu9","rank":null,"uid":1000,"wall_time":1790200000,"wall_time_ns":0,"env":{},"settings":{"fallback":false,"workspace_limit_mb":-1,"reserve_mb":0},"max_mb":256,"crash_unwinder":"glibc"}
{"ev":"lib","seq":1,"t":0.02,"pid":5001,"tid":5001,"path":"/v/site-packages/tensorflow/libtensorflow_framework.so.2","soname":"libtensorflow_framework.so.2","family":"other","size":1,"mtime":1,"inode":1,"dev":1,"via":"(startup)"}
{"ev":"lib","seq":2,"t":0.03,"pid":5001,"tid":5001,"path":"/usr/lib/libcuda.so.1","soname":"libcuda.so.1","family":"driver","size":1,"mtime":1,"inode":2,"dev":1,"version":12040,"via":"(startup)"}
{"ev":"exit","seq":3,"t":0.04,"pid":5001,"tid":5001,"libs":2,"failures":0,"load_failures_unresolved":0,"calls":{},"fails":{},"dlopen_repeats":0,"events_dropped":0,"gpu_mem":{"live":0,"allocs":3,"frees":0,"largest_ok":1048576,"alloc_failures":0,"alloc_failed_unwritten":0,"untracked":0,"unknown_frees":0}}
J
    { printf '{"convguard_capture":1,"host":"gpu9","pid":5000,"child":5001,"start":1790199999,"end":1790200009,"mode":"pipe","bytes":%d,"status":0,"sections":[{"name":"tail","bytes":%d,"cut":false}]}\n' "$n" "$n"; cat "$d/body"; } >"$d/gpu9-5000.stderr"
    rm "$d/body"
}
B=$WORK/benign
mkcase "$B" \
    "2024-01-02 10:00:00.000001: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered" \
    "2024-01-02 10:00:00.100000: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT" \
    "2024-01-02 10:00:00.200000: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory" \
    "2024-01-02 10:00:00.300000: I external/local_xla/xla/stream_executor/cuda/cuda_executor.cc:901] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero." \
    "2024-01-02 10:00:00.400000: W tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.26GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available." \
    "/v/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)"
"$CG" report --json "$B" >"$WORK/b.json"
check "benign lines: no finding (TensorRT's libnvinfer is not 'a CUDA library did not load', cuDNN's skipped plans are not CUDNN_STATUS_ errors)" \
    jq -e '.findings | length == 0' "$WORK/b.json"
check "benign lines: none is quoted" jq -e '[.processes[0].captured.lines[]?] | length == 0' "$WORK/b.json"
mkcase "$WORK/benign2" \
    "W0000 00:00:1744708234.960672 1370911 computation_placer.cc:177] computation placer already registered. Please check linkage and avoid linking the same target more than once." \
    "2024-01-02 10:00:01.000000: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory"
"$CG" report --json "$WORK/benign2" >"$WORK/b2.json"
check "... a real load failure beside them is still the finding (printed_load, TensorFlow's words)" \
    jq -e '.findings[0].rule == "printed_load" and (.findings[0].symptom | contains("libcudart.so.11.0"))' "$WORK/b2.json"
check "... its fix names TensorFlow's knobs and no other framework's" \
    jq -e '(.findings[0].fix | contains("tensorflow[and-cuda]")) and (.findings[0].fix | test("PyTorch|JAX|CuPy") | not)' "$WORK/b2.json"

# ---- a fix names only the frameworks of the process (item 5)
"$CG" report --json "$R/corpus/p-cublas-not-initialized" >"$WORK/cb.json"
check "cuBLAS in a PyTorch process: the fix's PyTorch part, not TensorFlow's or JAX's" \
    jq -e '(.findings[0].fix | contains("PyTorch:")) and (.findings[0].fix | test("TensorFlow|JAX|XLA_") | not)' "$WORK/cb.json"
"$CG" report --json "$R/corpus/p-cuda-too-many-resources" >"$WORK/c.json"
check "a C program: no framework's knobs at all" jq -e '.findings[0].fix | test("PyTorch|TensorFlow|JAX|CuPy") | not' "$WORK/c.json"
check "you see quotes what the program printed" \
    jq -e '.findings[0].you_see_source == "stderr" and (.findings[0].symptom | contains("too many resources requested for launch sim.cu"))' "$WORK/c.json"

# ---- the trace agrees: a driver_log event of the same status is named in the cause
"$CG" report --json "$R/corpus/p-cuda-illegal-address" >"$WORK/ia.json"
check "illegal address + the driver's log: printed_kernel (not the bare driver_reported_error), the trace agrees" \
    jq -e '.findings[0].rule == "printed_kernel" and (.findings[0].cause | contains("the trace agrees: #5 cuLaunchKernel -> CUDA_ERROR_ILLEGAL_ADDRESS"))' "$WORK/ia.json"
check "... and driver_reported_error is not a second finding" \
    jq -e '[.findings[].rule] | index("driver_reported_error") == null' "$WORK/ia.json"

# ---- the order of the rows decides
if ! command -v "${CC:-cc}" >/dev/null || [ -n "${CG_SANITIZED:-}" ]; then
    finish
    exit
fi
swapped_cg() { # a convguard whose patterns.def has rows $1 and $2 swapped
    local d=$WORK/swap-$1-$2
    mkdir -p "$d"
    cp "$ROOT/tools/model/capture.c" "$d/"
    python3 - "$P" "$1" "$2" >"$d/patterns.def" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
rx = lambda m: re.compile(r'^MESSAGE\(%s,.*?"\)\n' % m, re.S | re.M)
ra, rb = rx(sys.argv[2]).search(text).group(0), rx(sys.argv[3]).search(text).group(0)
sys.stdout.write(text.replace(ra, "\0A").replace(rb, ra).replace("\0A", rb))
EOF
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -O0 -I"$d" -I"$ROOT/tools" -I"$ROOT/shim" -c "$d/capture.c" -o "$d/capture.o" &&
        ${CC:-cc} -o "$d/convguard" $(cd "$ROOT" && find tools -name '*.c' ! -path tools/model/capture.c | sort | sed "s|^\(.*\)\.c\$|$BUILD_DIR/\1.o|") \
            "$d/capture.o" -ljansson -ldl -lm -lpthread && echo "$d/convguard"
}
# first second case: right with the table's order, wrong with the two rows swapped
pairs=(
    "torch_oom_tried torch_oom p-torch-oom-tried"
    "cuda_forward_compat torch_cuda_devicecount p-cuda-forward-compat"
    "cudnn_sublib_version cudnn_status p-cudnn-sublib-version"
    "cuda_initialization_error cudart_error p-cuda-initialization-error"
    "cuda_no_device tf_cuinit p-cuda-no-device-name"
    "tf_nvinfer_missing tf_load_dso -"
    "torch_plan_failed cudnn_status -"
    "tf_cupti_missing tf_load_dso p-tf-cupti-missing"
    "cuda_peer_access nccl_cuda_failure p-cuda-peer-access"
    "cublas_invalid_value cublas_status p-cublas-invalid-value"
    "torch_expandable_not_supported cuda_not_supported p-torch-expandable-not-supported"
    "cuda_not_supported cuda_driver_error p-cuda-not-supported"
    "cuda_invalid_ordinal cuda_error p-cuda-invalid-ordinal"
    "cuda_ecc cuda_error p-cuda-ecc"
    "cuda_launch_timeout cuda_error p-cuda-launch-timeout"
    "triton_invalid_image triton_cuda_error p-triton-invalid-image"
    "triton_ptxas_gpu_name triton_ptx_codegen p-triton-ptxas-gpu-name"
)
for p in "${pairs[@]}"; do
    read -r a b c <<<"$p"
    check "$a before $b in patterns.def" \
        bash -c "[ \$(grep -n '^MESSAGE($a,' '$P' | cut -d: -f1) -lt \$(grep -n '^MESSAGE($b,' '$P' | cut -d: -f1) ]"
    sw=$(swapped_cg "$a" "$b")
    if [ -z "$sw" ]; then
        fail "$a/$b: the swapped build failed"
        continue
    fi
    if [ "$c" = - ]; then # the benign run: a finding once the benign row comes after the generic one
        check "benign run: a finding with $a and $b swapped (the order decides)" \
            bash -c "'$sw' report --json '$B' | jq -e '.findings | length > 0' >/dev/null"
        continue
    fi
    mkdir -p "$WORK/one-$c" && cp -r "$R/corpus/$c" "$WORK/one-$c/"
    check "$c: right with the table's order" bash -c "CG='$CG' bash '$R/accuracy.sh' '$WORK/one-$c' >/dev/null"
    check "$c: wrong with $a and $b swapped (the order decides)" \
        bash -c "! CG='$sw' bash '$R/accuracy.sh' '$WORK/one-$c' >/dev/null"
done
finish
