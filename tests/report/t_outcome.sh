# t_outcome.sh - every report starts from what happened to each process, and
# its headline is what the program died of (issue 27 items 1 and 2):
#   - a forked child fails while its parent exits 0 (a real run under
#     `convguard run`): a problem, exit 1, the child's exception quoted;
#   - a process fails and no rule explains it: the plain truth (pid, exit
#     status, its final line, what convguard checked), exit 1;
#   - a failure the same library went on from (a probe, a pool that shrank, an
#     engine that fell back) is context, never the headline; in a run that
#     exited 0 it is a note, never an error;
#   - closeness to the final error decides the order, not the table's.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
D=$DOUBLES
[ -e "$D/cuda/libcuda.so.1" ] || skip_all "test doubles missing (make test builds them)"
command -v python3 >/dev/null || skip_all "python3 missing"
cd "$WORK"

# ---- a forked child fails, its parent exits 0
cat > fork_fail.py <<'EOF'
import ctypes, os, sys
ctypes.CDLL(sys.argv[1])           # the parent touches the driver: it has a trace
pid = os.fork()
if pid == 0:                       # the child: its traceback on the shared stderr, exit 1
    raise ValueError("bad shard 7 in the loader")
os.waitpid(pid, 0)
sys.exit(0)
EOF
"$CG" run --dir "$WORK/fork" -- python3 fork_fail.py "$D/cuda/libcuda.so.1" 2>fork.err
check "run keeps the program's exit status (0)" test $? = 0
"$CG" report "$WORK/fork" >fork.out
check "report: exit 1 (a process of the run failed)" test $? = 1
check "... not 'no problem found'" bash -c "! head -1 fork.out | grep -q 'no problem found'"
check "... the outcome line comes second and quotes the child's exception" \
    bash -c "sed -n 2,3p fork.out | tr '\n' ' ' | tr -s ' ' | grep -q '^outcome: pid [0-9]* exited 0; the run.s output holds an error no traced process owns: \"ValueError: bad shard 7 in the loader\"'"
check "... a finding says a process of the run failed" grep -q '^\[program\] a process of this run failed: "ValueError: bad shard 7' fork.out
check "run printed the same report after the program" grep -q 'a process of this run failed' fork.err

# ---- a process fails and no rule explains it
cat > plain_fail.py <<'EOF'
import ctypes, sys
ctypes.CDLL(sys.argv[1])
raise RuntimeError("expected scalar type Float but found Half")
EOF
"$CG" run --dir "$WORK/plain" -- python3 plain_fail.py "$D/cuda/libcuda.so.1" 2>/dev/null
check "run: the program's exit status (1)" test $? = 1
"$CG" report "$WORK/plain" >plain.out
check "report: exit 1" test $? = 1
tr '\n' ' ' <plain.out | tr -s ' ' >plain.flat
check "outcome: pid N failed (exit 1): its final line" \
    grep -qE 'outcome: pid [0-9]+ failed \(exit 1\): "RuntimeError: expected scalar type Float but found Half"' plain.flat
check "the plain truth: no failing call, what was checked" \
    grep -qE 'convguard saw no failing CUDA or cuDNN call in it; it checked: libraries \(1 loaded\), the driver' plain.flat
"$CG" report --json "$WORK/plain" >plain.json
check "--json: the process's outcome (failed, status 1, final line) and the finding process_failed" \
    jq -e '.processes[0].outcome.kind == "failed" and .processes[0].outcome.status == 1
           and (.processes[0].outcome.final_line | startswith("RuntimeError")) and .findings[0].rule == "process_failed"
           and .outcome.failed == 1' plain.json

# ---- hand-made traces: one process, its capture, the recorded status
# mk DIR STATUS EXCEPTION-LINE EVENTS-JSON EXIT-JSON
mk() {
    python3 - "$@" <<'EOF'
import json, os, sys
d, status, exc, evs, ex = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
os.makedirs(d)
pid, host, wall = 7001, "oc-" + os.path.basename(d), 1790000000
out = [{"ev": "start", "pid": pid, "tid": pid, "ppid": 7000, "exe": "/usr/bin/python3", "argv": ["python3", "train.py"],
        "host": host, "rank": None, "wall_time": wall, "wall_time_ns": 0, "env": {}},
       {"ev": "lib", "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "soname": "libcuda.so.1", "family": "driver",
        "inode": 1, "dev": 1, "version": 12040, "via": "(startup)"}] + evs
if ex is not None:
    out.append(dict(ev="exit", libs=1, load_failures_unresolved=0, dlopen_repeats=0, events_dropped=0, **ex))
with open(os.path.join(d, "%s-%d.jsonl" % (host, pid)), "w") as f:
    for i, e in enumerate(out):
        e.setdefault("seq", i), e.setdefault("t", round(0.01 * (i + 1), 2)), e.setdefault("pid", pid)
        f.write(json.dumps(e) + "\n")
body = ("epoch 1\n" + ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n%s\n"
                       % exc if exc else "done\n")).encode()
hdr = {"convguard_capture": 1, "host": host, "pid": 7000, "child": pid, "start": wall - 1, "end": wall + 9,
       "mode": "pipe", "bytes": len(body), "status": status, "sections": [{"name": "tail", "bytes": len(body)}]}
open(os.path.join(d, "%s-7000.stderr" % host), "wb").write(json.dumps(hdr).encode() + b"\n" + body)
EOF
}
headline() { jq -r '.findings[0].rule' "$1"; }
sev_of() { jq -r --arg r "$2" '[.findings[] | select(.rule == $r) | .severity][0]' "$1"; }

ASSERT='RuntimeError: CUDA error: device-side assert triggered'
# probe: NCCL loads kernels for another GPU generation, fails, goes on (41 of 42 loads work)
PROBE='[{"ev":"code_load_failed","fn":"cuModuleLoadData","status":209,"status_name":"CUDA_ERROR_NO_BINARY_FOR_GPU","caller":"/usr/lib/libnccl.so.2","t":0.05}]'
PROBE_EXIT='{"failures":1,"calls":{"cuModuleLoadData":42},"fails":{"cuModuleLoadData":1}}'
# pool shrink: JAX asks for its pool, gets a smaller one
POOL='[{"ev":"alloc_failed","fn":"cuMemAlloc_v2","route":"entry_point","bytes":107374182400,"status":2,"status_name":"CUDA_ERROR_OUT_OF_MEMORY","mem":{"free":85899345920,"total":150323855360,"source":"driver"},"live":0,"largest_ok":0,"caller":"/site-packages/jaxlib/xla_extension.so","t":0.05}]'
POOL_EXIT='{"failures":1,"calls":{"cuMemAlloc_v2":3},"fails":{"cuMemAlloc_v2":1},"gpu_mem":{"live":64424509440,"allocs":2,"frees":0,"largest_ok":64424509440,"alloc_failures":1},"frameworks":["jax"]}'
# engine fallback: one cuDNN engine fails to execute, another runs the convolutions
FALLBACK='[{"ev":"conv_exec_failed","fn":"cudnnConvolutionForward","op":"forward","algo":6,"algo_name":"CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING","workspace":0,"status":8,"status_name":"CUDNN_STATUS_EXECUTION_FAILED","mem":{"free":85899345920,"total":150323855360,"source":"driver"},"t":0.05}]'
FALLBACK_EXIT='{"failures":1,"calls":{"cudnnConvolutionForward":500},"fails":{"cudnnConvolutionForward":1}}'
for fam in PROBE POOL FALLBACK; do
    evs=${!fam}; ex_var=${fam}_EXIT; ex=${!ex_var}
    mk "$WORK/ok-$fam" 0 "" "$evs" "$ex"
    "$CG" report --json "$WORK/ok-$fam" >ok.json; rc=$?
    check "$fam, run exited 0: no finding is an error" jq -e '[.findings[] | select(.severity == "error")] | length == 0' ok.json
    check "$fam, run exited 0: the failure is a note it went on from (place context, went_on said)" \
        jq -e '.findings | length > 0 and all(.severity == "note" and .place == "context" and (.went_on | test("went on")))' ok.json
    check "$fam, run exited 0: report exit 0 (notes are no problem)" test $rc = 0
    # the same failure, then the program dies of a kernel assertion (and a later failure of the driver)
    later=$(echo "$evs" | jq -c '. + [{"ev":"driver_log","level":"error","message":"device-side assert","fn":"cuStreamSynchronize","status":710,"status_name":"CUDA_ERROR_ASSERT","hooked":false,"t":0.5}]')
    mk "$WORK/bad-$fam" 1 "$ASSERT" "$later" "$ex"
    "$CG" report --json "$WORK/bad-$fam" >bad.json
    check "$fam, then the process died of an assert: the headline is the assert, not the failure it went on from" \
        bash -c "[ \"\$(jq -r '.findings[0].place' bad.json)\" = died_of ] && jq -e '.findings[0].symptom | contains(\"device-side assert\")' bad.json"
    check "$fam, ... the failure it went on from is context (a note), after the headline" \
        jq -e '[.findings[] | select(.went_on != null)] | length == 1 and .[0].severity == "note"' bad.json
done
check "the probe's context names NCCL's library and that it went on" \
    bash -c "'$CG' report '$WORK/bad-PROBE' | tr '\n' ' ' | tr -s ' ' | grep -q 'then libnccl.so.2 went on: 41 of 42 cuModuleLoadData calls succeeded: context'"
check "the pool's context: JAX's later allocation worked (the pool was made smaller)" \
    bash -c "'$CG' report '$WORK/ok-POOL' | tr '\n' ' ' | tr -s ' ' | grep -q 'then xla_extension.so went on: a later allocation of 60.0 GiB succeeded'"

# ---- precedence: closeness to the final error decides, not the table's order.
# A library failed to load early (the table puts the loading rules before the
# printed ones) and nothing loaded it later; the program died of an assertion.
EARLY='[{"ev":"dlopen","name":"libnvrtc.so.12","flags":"RTLD_NOW","caller":"/site-packages/torch/lib/libtorch_cuda.so","ok":false,"error":"libnvrtc.so.12: cannot open shared object file: No such file or directory","error_kind":"absent","t":0.05}]'
mk "$WORK/prec" 1 "$ASSERT" "$EARLY" '{"failures":1,"calls":{},"fails":{}}'
"$CG" report --json "$WORK/prec" >prec.json
load=$(jq -r '[.findings[].rule | select(startswith("load_"))][0]' prec.json)
check "precedence: the assertion the program died of heads, the earlier load failure ($load) after it" \
    jq -e '.findings[0].rule == "printed_kernel" and .findings[0].place == "died_of"
           and ([.findings[].rule | select(startswith("load_"))] | length == 1) and .processes[0].rules[0] == "printed_kernel"' prec.json
check "precedence: in the table $load comes before printed_kernel (the order is closeness, not the table)" \
    test "$(grep -n "^RULE($load," "$ROOT/tools/rules/rules.def" | cut -d: -f1)" -lt "$(grep -n '^RULE(printed_kernel,' "$ROOT/tools/rules/rules.def" | cut -d: -f1)"
"$CG" report "$WORK/prec" >prec.out
check "text: the outcome line first, then the assertion's finding before the load failure" \
    bash -c "sed -n 2p prec.out | grep -q '^outcome: pid 7001 failed (exit 1)' &&
             [ \$(grep -n '^\[runtime\] an assertion' prec.out | cut -d: -f1) -lt \$(grep -n '^\[library\]' prec.out | head -1 | cut -d: -f1) ]"
finish
