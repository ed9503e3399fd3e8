# tests/fallback_lib.sh - shared by tests/preload/t_fallback_*.sh (sourced after lib.sh).
#
# scenario NAME ACTION CMD... (environment in FB_REF_ENV / FB_BAD_ENV / FB_ON_ENV, word lists)
#   ref  the program unconstrained, no shim: its output is the reference
#   bad  constrained, no shim; then constrained with the shim and CONVGUARD_FALLBACK unset:
#        identical output (nothing changes without the setting), and it fails
#   on   constrained, shim, CONVGUARD_FALLBACK=1: it completes, its result lines (FB_RESULT, a grep
#        pattern, default "^y sum") equal the reference's, one `fallback` event of ACTION at least,
#        the exit event counts them and the stderr line says how many times fallback acted
# Leaves the fallback run's trace in $T and its output in $WORK/NAME.on.
FB_RESULT=${FB_RESULT:-'^y sum'}
scenario() {
    local name=$1 action=$2; shift 2
    env $FB_REF_ENV "$@" >"$WORK/$name.ref" 2>/dev/null
    check "$name: the unconstrained run completes (exit 0)" test $? = 0
    env $FB_REF_ENV $FB_BAD_ENV "$@" >"$WORK/$name.bad" 2>/dev/null
    local rc_bad=$?
    check "$name: constrained, without the shim, the program fails (exit $rc_bad)" test "$rc_bad" != 0
    mkdir -p "$WORK/$name.off"
    env $FB_REF_ENV $FB_BAD_ENV CONVGUARD_DIR="$WORK/$name.off" LD_PRELOAD="$SHIM" "$@" >"$WORK/$name.offout" 2>"$WORK/$name.offerr"
    local rc_off=$?
    check "$name: CONVGUARD_FALLBACK unset: same output and exit status as without the shim" \
        eval "diff '$WORK/$name.bad' '$WORK/$name.offout' && test $rc_off = $rc_bad"
    check "$name: CONVGUARD_FALLBACK unset: no fallback event, no fallback count" \
        jqt "$(trace_of "$WORK/$name.off")" 'map(select(.ev=="fallback")) | length == 0 and (.[-1] | has("fallbacks") | not)'
    mkdir -p "$WORK/$name.tr"
    env $FB_REF_ENV $FB_BAD_ENV $FB_ON_ENV CONVGUARD_FALLBACK=1 CONVGUARD_DIR="$WORK/$name.tr" LD_PRELOAD="$SHIM" "$@" \
        >"$WORK/$name.on" 2>"$WORK/$name.err"
    check "$name: with CONVGUARD_FALLBACK=1 the program completes (exit 0)" test $? = 0
    check "$name: ...and its result equals the unconstrained run's" \
        eval "grep -E '$FB_RESULT' '$WORK/$name.on' | grep -q . && diff <(grep -E '$FB_RESULT' '$WORK/$name.ref') <(grep -E '$FB_RESULT' '$WORK/$name.on')"
    T=$(trace_of "$WORK/$name.tr")
    check "$name: a fallback event '$action' with asked, given, why and outcome ok" jqt "$T" "
        map(select(.ev==\"fallback\" and .action==\"$action\")) | length >= 1
        and all(.[]; (.asked|type)==\"number\" and (.given|type)==\"number\" and (.why|length) > 10 and .outcome==\"ok\")"
    check "$name: the exit event counts the fallbacks" jqt "$T" \
        '(map(select(.ev=="fallback")) | length) as $n | $n >= 1 and .[-1].ev == "exit" and .[-1].fallbacks == $n'
    check "$name: the stderr line says how many times fallback acted" \
        grep -qE '^convguard: .*; fallback acted [0-9]+ times?; trace ' "$WORK/$name.err"
    check "$name: trace valid" traces_valid "$WORK/$name.tr"
}
