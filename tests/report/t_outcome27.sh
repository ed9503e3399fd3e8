# t_outcome27.sh - the classes of failure of issue 27's held-out H200 runs that the report got
# wrong (tests/report/outcome27/, written by shape27.py in the shim's formats): a run that exited 0
# leads with success (a logged exception, a pool that shrank, a child whose status is unknown); a
# failed forked child is seen and its message's fix given; /dev/shm's size named; a partial cuDNN
# copy first in LD_LIBRARY_PATH named with its fix; the allocator setting the process ran with
# named; NCCL's kernel probe a note behind "two ranks on one GPU".
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
O=$ROOT/tests/report/outcome27
T=$ROOT/tests/report/traces
command -v jq >/dev/null || skip_all "no jq"

rep() { "$CG" report --json "$O/$1" >"$WORK/$1.json" 2>/dev/null; echo $? >"$WORK/$1.rc"; }
j() { jq -e "$2" "$WORK/$1.json" >/dev/null; }
noerr='[.findings[] | select(.severity == "error")] | length == 0'

# ---- JAX falls back to the CPU (CUDA_VISIBLE_DEVICES names no GPU); its plugin's traceback was logged
rep jax-cpu-fallback
check "cpu fallback: no finding is an error (the run exited 0)" j jax-cpu-fallback "$noerr"
check "cpu fallback: the headline is a warning that says the work ran on the CPU" \
    j jax-cpu-fallback '.findings[0].severity == "warning" and (.findings[0].cause | test("CPU"))'
check "cpu fallback: the outcome says the exception was logged and the program went on" \
    j jax-cpu-fallback '.outcome.text | test("exited 0; an exception was logged and the program went on")'
check "cpu fallback: the logged exception is a note, told last" \
    j jax-cpu-fallback '.findings[-1].rule == "caught_exception" and .findings[-1].severity == "note"'
check "cpu fallback: the GPU-visibility finding says the GPU was never used" \
    j jax-cpu-fallback '[.findings[] | select(.rule == "visible_devices_unknown") | .title] | .[0] | test("^the GPU was never used")'
check "cpu fallback: no fix names PyTorch's or TensorFlow's knobs" \
    bash -c "! jq -r '.findings[].fix' '$WORK/jax-cpu-fallback.json' | grep -qE 'torch\\.|PYTORCH_|tf\\.config|TF_FORCE'"

# ---- the same fallback where JAX's logger wrote the bare message (no level prefix): the traceback starts in
# the function that caught it (discover_pjrt_plugins), not at <module>
rep jax-cpu-fallback-bare-log
check "cpu fallback, bare log record: no finding is an error (the run exited 0)" j jax-cpu-fallback-bare-log "$noerr"
check "cpu fallback, bare log record: the headline is a warning that says the work ran on the CPU" \
    j jax-cpu-fallback-bare-log '.findings[0].severity == "warning" and (.findings[0].cause | test("CPU"))'
check "cpu fallback, bare log record: the caught exception is a note naming the function that caught it" \
    j jax-cpu-fallback-bare-log '.findings[-1].rule == "caught_exception" and .findings[-1].severity == "note" and (.findings[-1].cause | test("starts in discover_pjrt_plugins, not at the program.s top"))'
# a traceback from <module> after a line the program printed (no log record) is Python's own report of an
# uncaught exception: in a run that exited 0, another process's failure, an error
rep ok-run-module-traceback
check "a traceback from <module> in a run that exited 0: the run's failure, an error, report exit 1" \
    bash -c "jq -e '.findings[0].rule == \"process_failed\" and .findings[0].severity == \"error\"' '$WORK/ok-run-module-traceback.json' >/dev/null && [ \$(cat '$WORK/ok-run-module-traceback.rc') = 1 ]"

# ---- two JAX processes, NVML absent: the other traced process of the host that held a pool is named
rep jax-two-no-nvml
check "two JAX processes, no NVML: the headline names the other traced process and its pool" \
    j jax-two-no-nvml '.findings[0].rule == "oom_memory_held" and (.findings[0].cause | test("process 6102 \\(python3.12\\) held 105.0 GiB"))'
check "two JAX processes, no NVML: the fix is JAX's sharing knob" j jax-two-no-nvml '.findings[0].fix | test("XLA_PYTHON_CLIENT_PREALLOCATE=false")'

# ---- the same traceback without a log record before it (Python's own report) stays an error
rep fork-reinit-untraced
check "untraced forked children: a problem, report exit 1" test "$(cat "$WORK/fork-reinit-untraced.rc")" = 1
check "untraced forked children: the headline is the run's failure, with its message's cause (fork)" \
    j fork-reinit-untraced '.findings[0].rule == "process_failed" and .findings[0].severity == "error" and (.findings[0].cause | test("fork"))'
check "untraced forked children: ... and its fix (spawn)" \
    j fork-reinit-untraced '.findings[0].fix | test("set_start_method\\(\"spawn\"\\)")'

# ---- the forked children's _exit(1) lines (the shim writes a file for a failing forked child)
rep fork-reinit
check "forked children: the outcome counts both failed (exit 1), the parent exited 0" \
    j fork-reinit '.outcome.failed == 2 and .outcome.ok == 1 and (.outcome.text | test("failed \\(exit 1\\)"))'
check "forked children: the headline is their message's finding, an error, fix spawn" \
    j fork-reinit '.findings[0].rule == "printed_usage" and .findings[0].severity == "error" and (.findings[0].fix | test("spawn"))'

# ---- JAX next to a hog: the first preallocation failed, a smaller pool worked, exit 0
rep jax-pool-shrinks
check "pool shrinks: no finding is an error" j jax-pool-shrinks "$noerr"
check "pool shrinks: the failed allocation is a note (the pool went on)" \
    j jax-pool-shrinks '[.findings[] | select(.rule == "alloc_memory_held")][0].severity == "note"'
check "pool shrinks: no 'another process ... ran out' for the log line of the recovered failure" \
    j jax-pool-shrinks '[.findings[] | select(.rule == "oom_memory_held")] | length == 0'

# ---- a child that ran to exit() (no status) in a run that exited 0
rep ok-run-child
check "run exited 0: the child's failure is a warning, not an error" \
    j ok-run-child "($noerr) and ([.findings[] | select(.rule == \"handle_failed\")][0].severity == \"warning\")"

# ---- DataLoader workers and a 16 MiB /dev/shm (the worker's SIGBUS crash carries the shim's shm)
rep small-shm
check "small shm: the headline is the shared-memory finding" j small-shm '.findings[0].rule == "printed_host"'
check "small shm: its cause names /dev/shm and its size as the worker saw it" \
    j small-shm '.findings[0].cause | test("/dev/shm here: 16 MiB, 0 bytes free at the crash of pid 6602")'
check "small shm: its fix says --shm-size or --ipc=host" j small-shm '.findings[0].fix | test("--shm-size=8g.*--ipc=host")'

# ---- the worker's exception re-raised in the main process, wrapped ("Caught RuntimeError in DataLoader worker
# process 0." + "Original Traceback"): the wrapped line is what the process died of; the workers exited 0
rep small-shm-wrapped
check "small shm, wrapped: the outcome's final line is the worker's exception, not the wrapper's" \
    j small-shm-wrapped '.outcome.text | test("pid 6611 failed \\(exit 1\\): \"RuntimeError: unable to allocate shared memory")'
check "small shm, wrapped: the headline is the shared-memory finding, an error of the resource layer" \
    j small-shm-wrapped '.findings[0].rule == "printed_host" and .findings[0].severity == "error" and .findings[0].layer == "resource"'
check "small shm, wrapped: you see quotes the wrapper and the worker's line" \
    j small-shm-wrapped '.findings[0].symptom | test("Caught RuntimeError in DataLoader worker process 0.*unable to allocate shared memory")'
check "small shm, wrapped: the cause names /dev/shm's size, read when a worker started" \
    j small-shm-wrapped '.findings[0].cause | test("/dev/shm here: 16 MiB, .* free when pid 661[23] started")'
check "small shm, wrapped: the fix says --shm-size, --ipc=host and num_workers" \
    j small-shm-wrapped '.findings[0].fix | test("--shm-size=8g.*--ipc=host.*num_workers=0")'
check "small shm, wrapped: the workers (exit 0) did not fail: one process failed, no 'failed later'" \
    bash -c "jq -e '.outcome.failed == 1' '$WORK/small-shm-wrapped.json' >/dev/null && ! '$CG' report '$O/small-shm-wrapped' | grep -q 'failed later'"

# ---- a partial copy of the wheel's cuDNN first in LD_LIBRARY_PATH; the part it lacks found in the system's
# cuDNN of another version, refused by the loader (another build's symbols): exit 0, and exit 1
rep cudnn-part-refused-ok
check "partial copy, part refused, run exited 0: a warning, no error" \
    j cudnn-part-refused-ok "($noerr) and .findings[0].rule == \"load_cudnn_sublib_failed\" and .findings[0].severity == \"warning\""
check "partial copy, part refused: the cause names the system folder, its cuDNN version and the partial copy" \
    j cudnn-part-refused-ok '.findings[0].cause | test("found /lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9 by its name, in /lib/x86_64-linux-gnu, a system folder \\(the system package.s cuDNN 9.14.0\\).*/tmp/cg2-cudnn-y2, first in LD_LIBRARY_PATH, holds a copy of cuDNN without libcudnn_engines_precompiled.so.9")'
check "partial copy, part refused: the fix takes the copy out of LD_LIBRARY_PATH, not the system's file" \
    j cudnn-part-refused-ok '(.findings[0].fix | test("^take /tmp/cg2-cudnn-y2 out of LD_LIBRARY_PATH")) and (.findings[0].fix | test("^remove or replace") | not)'
rep cudnn-part-refused-fails
check "partial copy, part refused, no engine (exit 1): the headline is the part's failure, an error" \
    j cudnn-part-refused-fails '.findings[0].rule == "load_cudnn_sublib_failed" and .findings[0].severity == "error" and (.findings[0].fix | test("LD_LIBRARY_PATH"))'

# ---- a partial copy of the wheel's cuDNN first in LD_LIBRARY_PATH; the missing part from the system's
rep cudnn-part-system-fails
check "partial copy, other version: two installs mixed, an error naming the system folder" \
    j cudnn-part-system-fails '.findings[0].rule == "cudnn_sublib_mismatch" and .findings[0].severity == "error" and (.findings[0].cause | test("/usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9 \\(9.14.0\\)"))'
check "partial copy, other version: the cause says the copy first in LD_LIBRARY_PATH lacks the part" \
    j cudnn-part-system-fails '.findings[0].cause | test("/tmp/cg2-cudnn-x1, first in LD_LIBRARY_PATH, holds a copy of cuDNN without libcudnn_engines_precompiled.so.9")'
check "partial copy, other version: the fix takes that copy out of LD_LIBRARY_PATH" \
    j cudnn-part-system-fails '.findings[0].fix | test("^take /tmp/cg2-cudnn-x1 out of LD_LIBRARY_PATH")'
rep cudnn-part-same-ok
check "partial copy, same version, run exited 0: a warning, no error" \
    j cudnn-part-same-ok "($noerr) and .findings[0].rule == \"cudnn_parts_split\" and .findings[0].severity == \"warning\""

# ---- a misspelt PYTORCH_CUDA_ALLOC_CONF key: the message's row and the value the process ran with
rep alloc-conf-typo
check "alloc conf: the headline is the allocator-settings row, an error" \
    j alloc-conf-typo '.findings[0].rule == "printed_usage" and (.findings[0].title | test("PYTORCH_CUDA_ALLOC_CONF"))'
check "alloc conf: its cause names the value the process ran with" \
    j alloc-conf-typo '.findings[0].cause | test("this process ran with PYTORCH_CUDA_ALLOC_CONF=\"expandable_segment:True\"")'

# ---- two ranks on one GPU: NCCL's kernel probe (209 from a lookup, every image fits) is a note
"$CG" report --json "$T/ranks_share_gpu.torchrun" >"$WORK/ranks.json"
check "two ranks, one GPU: the headline is ranks_share_gpu, not the GPU-code rule" \
    jq -e '.findings[0].rule == "ranks_share_gpu"' "$WORK/ranks.json"
check "two ranks, one GPU: each rank's exit status is torchrun's record of it (exitcode 1, its pid)" \
    jq -e '[.processes[] | select(.rank != null) | .outcome.status] == [1, 1]' "$WORK/ranks.json"
check "two ranks, one GPU: the 209 kernel lookup is a note that the library went on from" \
    jq -e '[.findings[] | select(.rule == "code_arch_mismatch")][0] | .severity == "note" and (.went_on | test("probing its kernels"))' "$WORK/ranks.json"
# the same lookup where the loaded code holds nothing for this GPU stays what the process died of
mkdir -p "$WORK/nofit" && jq -c 'if .ev == "exit" then .code_images = {"described": 1, "no_fit": 1} else . end' \
    "$T/ranks_share_gpu.torchrun/gpu1-r1-6202.jsonl" >"$WORK/nofit/gpu1-r1-6202.jsonl"
"$CG" report --json "$WORK/nofit" >"$WORK/nofit.json" 2>/dev/null
check "a 209 lookup when a loaded image fits nothing on this GPU is not a probe (an error)" \
    jq -e '[.findings[] | select(.rule == "code_arch_mismatch")][0].severity == "error"' "$WORK/nofit.json"
finish
