# t_crash.sh - a fatal signal leaves a `crash` event and then ends the
# process exactly as it would have without the shim: same signal, same core
# dump flag (compared through build/robust/waitstatus, since $? cannot show
# a core).  Both unwinders, forced with CONVGUARD_UNWIND: libunwind (when the
# machine has it) and glibc's (the path of machines without libunwind); and
# the default, auto, which uses what the process already has.
source "$(dirname "$0")/../lib.sh"
P=$ROBUST/prog_crash
WS=$ROBUST/waitstatus
cd "$WORK" || exit 1
ulimit -c "$(ulimit -Hc)" 2>/dev/null # let the kernel dump core: the flag must match too
export LD_LIBRARY_PATH=$DOUBLES/cuda

# status CMD...: how CMD ended ("signal 11 core 1"), without the shim
status() { "$WS" env "$@" 2>/dev/null; }
# status_shim DIR CMD...: the same with the shim preloaded, traces in DIR
status_shim() { local d=$1; shift; mkdir -p "$d"; "$WS" env CONVGUARD_QUIET=1 CONVGUARD_DIR="$d" LD_PRELOAD="$SHIM" "$@" 2>"$d.err"; }
crash_of() { jq -c 'select(.ev == "crash")' "$1"/*.jsonl; }

unwinders=glibc
if ldconfig -p 2>/dev/null | grep -q 'libunwind.so.8 '; then
    unwinders="libunwind glibc"
else
    echo "  (no libunwind.so.8 on this machine: its path is not tested here)"
fi

for mode in segv bus fpe ill abort nullcall; do
    want=$(status "$P" "$mode")
    case $mode in segv | nullcall) sig=11 ;; bus) sig=7 ;; fpe) sig=8 ;; ill) sig=4 ;; abort) sig=6 ;; esac
    for uw in $unwinders; do
        D=$WORK/$mode-$uw
        got=$(status_shim "$D" CONVGUARD_UNWIND=$uw "$P" "$mode")
        check "$mode ($uw unwinder): ends as without the shim ($want)" test "$got" = "$want" -a "${want%% core*}" = "signal $sig"
        T=$(trace_of "$D")
        check "$mode ($uw): one crash event, signal $sig, lines valid" \
            jqt "$T" "(map(select(.ev==\"crash\")) | length == 1 and .[0].signal == $sig) and ([.[].seq] | sort == [range(0; length)])"
        exp_uw=$uw
        [ $mode = nullcall ] && exp_uw=none # nothing to unwind from pc 0: pc and return address
        check "$mode ($uw): unwinder $exp_uw" jqt "$T" "map(select(.ev==\"crash\"))[0].unwinder == \"$exp_uw\""
        case $mode in
        abort) # frames: libc's raise/abort first, then the program
            check "$mode ($uw): backtrace reaches prog_crash through libc" \
                jqt "$T" 'map(select(.ev=="crash"))[0] | (.backtrace[0].module | test("libc")) and (.backtrace | map(.module // "" | endswith("/prog_crash")) | any) and .addr == null and .code_name == "SI_TKILL"' ;;
        nullcall)
            check "$mode ($uw): pc 0, then the caller's return address in prog_crash" \
                jqt "$T" 'map(select(.ev=="crash"))[0] | .addr == "0x0" and .backtrace[0] == {"module": null, "offset": "0x0"} and (.backtrace[1].module | endswith("/prog_crash"))' ;;
        *)
            check "$mode ($uw): frame 0 in prog_crash, fault address, a deeper frame in libc" \
                jqt "$T" 'map(select(.ev=="crash"))[0] | (.backtrace[0].module | endswith("/prog_crash")) and (.addr | startswith("0x")) and (.code > 0) and (.backtrace | length >= 3) and (.backtrace | map(.module // "" | test("libc")) | any)' ;;
        esac
    done
done

want=$(status "$ROBUST/prog_terminate")
got=$(status_shim "$WORK/term" "$ROBUST/prog_terminate")
check "uncaught C++ exception: ends as without the shim ($want)" test "$got" = "$want" -a "${want%% core*}" = "signal 6"
check "uncaught C++ exception: crash event, SIGABRT, std::terminate in libstdc++ on the way" \
    jqt "$(trace_of "$WORK/term")" 'map(select(.ev=="crash"))[0] | .signal == 6 and (.backtrace | map(.module // "" | test("libstdc")) | any)'
check "uncaught C++ exception: the default unwinder (auto) uses glibc's, libgcc_s being there" \
    jqt "$(trace_of "$WORK/term")" 'map(select(.ev=="crash"))[0].unwinder == "glibc"'

# auto never adds a library: a C program without libgcc_s gets the pc only,
# until a dlopen brings libgcc_s in; then glibc's unwinder is used.
if [ -z "${CG_SANITIZED:-}" ]; then # a sanitized shim brings libgcc_s in itself
    got=$(status_shim "$WORK/auto" "$P" segv)
    check "auto, no unwinder in the process: same end, frame 0 only, in prog_crash" \
        bash -c "[ '$got' = '$(status "$P" segv)' ] && jq -e -s 'map(select(.ev==\"crash\"))[0] | .unwinder == \"none\" and (.backtrace | length == 1) and (.backtrace[0].module | endswith(\"/prog_crash\"))' $WORK/auto/*.jsonl"
    check "auto: the maps are those of the program alone (no libunwind, no libgcc_s)" \
        bash -c "! grep -qE 'libunwind|libgcc_s' <(CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/auto LD_PRELOAD=$SHIM cat /proc/self/maps)"
fi
got=$(status_shim "$WORK/auto2" CG_DLOPEN=libgcc_s.so.1 "$P" segv)
check "auto, libgcc_s loaded by the program later: glibc's unwinder from then on" \
    jqt "$(trace_of "$WORK/auto2")" 'map(select(.ev=="crash"))[0] | .unwinder == "glibc" and (.backtrace | length >= 3)' 

D=$WORK/last
got=$(status_shim "$D" CG_FAIL_FIRST=1 "$P" segv)
check "crash.last_failure is the seq of the failed call before it" \
    jqt "$(trace_of "$D")" '(map(select(.ev | endswith("_failed")))[-1].seq) as $s | $s != null and map(select(.ev=="crash"))[0].last_failure == $s'

# A handler the program installs later, which reports and re-raises with the
# previous one restored (as Python's faulthandler does): both run.
want=$(status "$P" chain)
got=$(status_shim "$WORK/chain" "$P" chain)
check "program's own later handler runs, then ours: same end ($want)" test "$got" = "$want"
check "program's own later handler ran" grep -q "program handler ran" "$WORK/chain.err"
check "and the crash event is written after it" jqt "$(trace_of "$WORK/chain")" 'map(select(.ev=="crash")) | length == 1'
# An unwinder that faults on a corrupt frame (inside our handler): the event
# is written without a backtrace, and the process still dies of SIGILL.
if [ "$(uname -m)" = x86_64 ]; then
    want=$(status "$P" badcfa)
    for uw in $unwinders; do
        got=$(status_shim "$WORK/cfa-$uw" CONVGUARD_UNWIND=$uw "$P" badcfa)
        check "unreadable frame ($uw): same end ($want), not the unwinder's SIGSEGV" test "$got" = "$want" -a "${want%% core*}" = "signal 4"
        check "unreadable frame ($uw): crash event with frame 0 in prog_crash" \
            jqt "$(trace_of "$WORK/cfa-$uw")" 'map(select(.ev=="crash"))[0] | .signal == 4 and (.backtrace[0].module | endswith("/prog_crash")) and (.unwinder == "failed" or .unwinder == "libunwind")'
    done
fi

# Python's faulthandler: its handler runs on its own small alternate stack
# (SIGSTKSZ + AT_MINSIGSTKSZ), restores ours and raises again (SA_NODEFER):
# ours then runs nested on what is left of that stack.
for uw in $unwinders; do
    want=$(status "$P" faulthandler)
    got=$(status_shim "$WORK/fh-$uw" CONVGUARD_UNWIND=$uw "$P" faulthandler)
    check "faulthandler-like handler on a small alternate stack ($uw): same end ($want)" test "$got" = "$want"
    check "faulthandler-like handler ($uw): it reported, then the crash event, with frames" \
        bash -c "grep -q 'as faulthandler' $WORK/fh-$uw.err && jq -e -s 'map(select(.ev==\"crash\"))[0] | .code_name == \"SI_TKILL\" and (.backtrace | length >= 3)' $WORK/fh-$uw/*.jsonl"
done
got=$(status_shim "$WORK/small" "$P" smallstack 8192)
check "an 8 KiB alternate stack is enough for the crash event" \
    bash -c "[ '$got' = '$(status "$P" smallstack 8192)' ] && jq -e -s 'map(select(.ev==\"crash\")) | length == 1' $WORK/small/*.jsonl"

# A handler that recovers (siglongjmp): the program goes on, no crash event.
out=$(CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/recover run_shim "$WORK/recover" "$P" recover 2>/dev/null)
check "program's own recovering handler: program goes on, exit 0" test "$out" = "recovered"
check "program's own recovering handler: no crash event (and no file: nothing else happened)" \
    bash -c "! cat $WORK/recover/*.jsonl 2>/dev/null | grep -q '\"ev\":\"crash\"'"
# A handler installed before ours (a library initialised earlier): ours
# writes the event and hands the signal to it.
want=$("$WS" env LD_PRELOAD="${CG_PRELOAD_FIRST:+$CG_PRELOAD_FIRST:}$ROBUST/libprehandler.so" "$P" segv 2>/dev/null)
got=$(status_shim "$WORK/pre" LD_PRELOAD="$SHIM:$ROBUST/libprehandler.so" "$P" segv)
check "earlier handler: same end ($want)" test "$got" = "$want" -a "${want%% core*}" = "signal 11"
check "earlier handler: it ran after ours, with the mask the kernel would give it" grep -q "earlier handler ran, mask as the kernel makes it" "$WORK/pre.err"
check "earlier handler: crash event says the program's handler came next" \
    jqt "$(trace_of "$WORK/pre")" 'map(select(.ev=="crash"))[0].next == "program_handler"'

# Stack overflow: on the thread's own stack the event is lost, but the
# process still dies of SIGSEGV; on an alternate stack it is written.
want=$(status "$P" overflow)
got=$(status_shim "$WORK/ovf" "$P" overflow)
check "stack overflow without an alternate stack: same end ($want)" test "$got" = "$want" -a "${want%% core*}" = "signal 11"
want=$(status "$P" altstack)
got=$(status_shim "$WORK/alt" "$P" altstack)
check "stack overflow on the program's alternate stack: same end, crash event" \
    bash -c "[ '$got' = '$want' ] && jq -e -s 'map(select(.ev==\"crash\")) | length == 1' $WORK/alt/*.jsonl"

# A forked child that crashes before any event of its own: its file is
# opened in the handler, start first.
# (Skipped under ASan: its 32 KiB alternate signal stack is too small for the
# child's start line and the crash event, so the shim rightly skips the event.)
[ -z "${CG_SANITIZED:-}" ] && {
out=$(CONVGUARD_QUIET=1 run_shim "$WORK/child" "$P" child_segv 2>/dev/null)
check "forked child's crash: parent sees the child killed by SIGSEGV" test "$out" = "child signal 11"
child=$(grep -l '"forked_from"' "$WORK"/child/*.jsonl)
check "forked child's crash: its own file, start (forked_from) then crash" \
    jq -e -s '.[0].ev == "start" and .[0].forked_from != null and .[1].ev == "crash" and .[1].signal == 11' $child
}
out=$(status_shim "$WORK/thr" "$P" thread_segv)
check "crash on another thread: same end, tid of that thread" \
    bash -c "[ '$out' = '$(status "$P" thread_segv)' ] && jq -e -s 'map(select(.ev==\"crash\"))[0] | .tid != .pid' $WORK/thr/*.jsonl"

got=$(status_shim "$WORK/off" CONVGUARD_CRASH=0 "$P" segv)
check "CONVGUARD_CRASH=0: no handler, no crash event, same end" \
    bash -c "[ '$got' = '$(status "$P" segv)' ] && ! cat $WORK/off/*.jsonl 2>/dev/null | grep -q '\"ev\":\"crash\"'"
finish
