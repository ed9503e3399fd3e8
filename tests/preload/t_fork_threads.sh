# t_fork_threads.sh - a child forked while other threads are inside the shim
# never blocks on a lock the shim (or a loader call it made) held (issue 21).
# 16 threads keep calling into hooked code (real cuDNN's cudnnCreate, dlopen
# and dlclose, dlsym, cuMemAlloc_v2/cudaMalloc on the doubles) while the main
# thread forks children one after another, each with its own 5 s limit
# (tests/robust/prog_forkstress.c); before the fix about 1 child in 30 hung in
# the loader's dl_load_write_lock.  Each variant forks 200-250 children; the
# output (children, hangs, bad exit statuses) must be the same with and
# without the shim, and every trace line one valid JSON object.
# CG_FORK_DIV=N divides the number of forks (make check-tsan: TSan makes each fork slow);
# CG_FORK_BASELINE=0 skips the runs without the shim (make check-tsan).
source "$(dirname "$0")/../lib.sh"
# ASan's allocator (GCC 12) is not fork-safe: children hang without the shim too (check-tsan runs this test)
[ -z "${CG_SANITIZED:-}" ] || skip_all "under ASan (its allocator hangs forked children without the shim too)"
P=$ROBUST/prog_forkstress
[ -x "$P" ] || skip_all "no $P (make robust)"
DIV=${CG_FORK_DIV:-1}
export CG_DRV=$DOUBLES/cuda/libcuda.so.1 CG_RT=$DOUBLES/cudart/libcudart.so.13
# the real cuDNN when it is there (its cudnnCreate fails 1001 without a GPU), else the double
if [ -e /usr/local/cuda/lib/libcudnn.so.9 ]; then export CG_CUDNN=/usr/local/cuda/lib/libcudnn.so.9
else export CG_CUDNN=$DOUBLES/cudnn9/libcudnn.so.9 LD_LIBRARY_PATH=$DOUBLES/cuda:$DOUBLES/cudart; fi

variant() { # name work threads forks child
    local name=$1 forks=$(( $4 / DIV ))
    [ "$forks" -ge 1 ] || forks=1
    local want="children=$forks hangs=0 bad=0"
    local plain shim rc
    if [ "${CG_FORK_BASELINE:-1}" = 1 ]; then
        plain=$(timeout 300 "$P" "$2" "$3" "$forks" "$5")
        check "$name: without the shim: $plain" test "$plain" = "$want"
    else
        plain=$want # make check-tsan: a TSan-built host's children fail on their own (TSan and fork)
    fi
    # a trace cap keeps the busy parent's file small; events past it are counted
    shim=$(CONVGUARD_QUIET=1 CONVGUARD_MAX_MB=4 CONVGUARD_DIR=$WORK/$name LD_PRELOAD=$SHIM timeout 300 \
        "$P" "$2" "$3" "$forks" "$5"); rc=$?
    check "$name: with the shim, the same: $shim (rc $rc)" test "$shim" = "$plain" -a $rc = 0
    check "$name: every trace line is one JSON object" lines_valid "$WORK/$name"
}

# one JSON object per line, no empty line, in every file
lines_valid() {
    local f
    for f in "$1"/*.jsonl; do
        [ -e "$f" ] || return 1
        [ "$(jq -c . "$f" | wc -l)" = "$(wc -l <"$f")" ] || return 1
        ! grep -q '^$' "$f" || return 1
        ! grep -q '}{' "$f" || return 1
    done
}

variant cudnn_dl   cudnn,dlopen,dlsym     16 250 dl
variant all_hooked cudnn,dlopen,dlsym,mem 16 250 hooked
variant mem_dl     mem,dlsym              16 200 dl
variant exec       cudnn,dlopen,mem       8  200 exec
variant spawn      cudnn,dlopen,dlsym,mem 8  100 spawn
variant vfork      cudnn,dlopen,dlsym,mem 8  100 vfork
# the children of `hooked` traced their own calls in files of their own
check "hooked children wrote traces of their own (forked_from)" \
    bash -c "grep -l '\"forked_from\"' $WORK/all_hooked/*.jsonl | grep -q ."
# the exec'ed shells started the shim afresh: no child of the exec variant is a forked copy
check "exec: the exec'ed shells' traces are not forked copies" \
    bash -c "! grep -l '\"exe\":\"[^\"]*/prog_forkstress\"' $WORK/exec/*.jsonl | xargs grep -l '\"forked_from\"' | grep -q ."
finish
