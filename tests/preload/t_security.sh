# t_security.sh - inert in setuid/setgid processes (AT_SECURE); trace files
# 0600, never through a symlink or over an existing file; file names from
# sanitised input only; errno and dlerror() unchanged across every route into
# a hook; no formatting functions imported at all.
source "$(dirname "$0")/../lib.sh"
S=$ROBUST/prog_secure
R=$ROBUST/prog_routes
host=$(uname -n | tr -c 'A-Za-z0-9._\n-' _)
# a trace file is made for a process that touches a CUDA-family library: prog_basic loads the driver double
export PROG_CUDA_LIB=$DOUBLES/cuda/libcuda.so.1

# ---- AT_SECURE.  glibc ignores LD_PRELOAD paths in setuid programs, so
# prog_secure links the shim itself; a copy made setuid (or setgid) to
# another user and run by root gets AT_SECURE.
# (Not under check-sanitize: the sanitizer runtimes ignore their options in a
# setuid process and LeakSanitizer then aborts it.)
if [ -n "${CG_SANITIZED:-}" ]; then
    echo "  (skipped under sanitizers: AT_SECURE)"
elif [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null && ! nobody_reads "$SHIM_SO"; then
    echo "  (skipped: AT_SECURE: the setuid copy runs as 'nobody', who cannot read $SHIM_SO (a checkout under a private directory))"
elif [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null; then
    chmod 0711 "$WORK"
    mkdir -p "$WORK/sec" "$WORK/secdir" "$WORK/plain"
    chmod 0755 "$WORK/sec"
    chmod 1777 "$WORK/secdir" # writable for the setuid user too: an active shim would write here
    cp "$S" "$WORK/sec/suid" && chown nobody "$WORK/sec/suid" && chmod 4755 "$WORK/sec/suid"
    cp "$S" "$WORK/sec/sgid" && chgrp nogroup "$WORK/sec/sgid" && chmod 2755 "$WORK/sec/sgid"
    for kind in suid sgid; do
        out=$(cd / && CONVGUARD_DIR=$WORK/secdir CONVGUARD_DIR_TYPO=1 LD_PRELOAD=$SHIM "$WORK/sec/$kind" 2>"$WORK/err.$kind")
        check "$kind: the shim is loaded" grep -q "shim mapped: yes" <<<"$out"
        check "$kind: no signal handler installed" grep -q "SIGSEGV handler: default" <<<"$out"
        check "$kind: hooks forward untouched (errno kept)" grep -q "dlopen: failed errno=77" <<<"$out"
        check "$kind: no file written" test -z "$(ls -A "$WORK/secdir")"
        check "$kind: not a word on stderr (settings not even read)" test ! -s "$WORK/err.$kind"
    done
    [ "$(cd / && "$WORK/sec/suid" | grep euid)" != "euid=0 ruid=0" ] || fail "setuid copy did not change the effective user"
    out=$(cd / && CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/plain "$S" 2>/dev/null)
    check "control: the same program, not setuid, is traced (handler, file)" \
        bash -c "grep -q 'SIGSEGV handler: installed' <<<'$out' && ls $WORK/plain/*.jsonl"
else
    echo "  (skipped: AT_SECURE needs root to make a setuid copy, a 'nobody' user and a 'nogroup' group)"
fi

# ---- files: 0600 whatever the umask; never through a planted symlink
D=$WORK/umask
check "trace file is 0600 even with umask 000" \
    bash -c "umask 000; CONVGUARD_QUIET=1 CONVGUARD_DIR=$D LD_PRELOAD=$SHIM $UNIT/prog_basic echo x >/dev/null && [ \$(stat -c %a $D/*.jsonl) = 600 ]"
check "a created trace directory is 0700 (umask 000)" test "$(stat -c %a "$D")" = 700
D=$WORK/plant
mkdir -p "$D"
echo precious >"$WORK/victim"
# the predicted name <host>-<pid>.jsonl is a symlink to the victim: bash
# plants it with its own pid, then execs the program under that pid
bash -c 'ln -s "$1" "$2/$3-$$.jsonl"; exec env CONVGUARD_QUIET=1 CONVGUARD_DIR="$2" LD_PRELOAD="$4" "$5" echo x' \
    sh "$WORK/victim" "$D" "$host" "$SHIM" "$UNIT/prog_basic" >/dev/null 2>&1
check "a symlink planted at the trace's name: the victim is untouched" test "$(cat "$WORK/victim")" = precious
check "a symlink planted at the trace's name: the trace takes the next name (.2)" \
    bash -c "ls $D | grep -qE -- '-[0-9]+\.2\.jsonl$' && [ \$(find $D -type l | wc -l) = 1 ]"

# ---- file names: a host name with '/' and spaces cannot leave the directory
if [ "$(id -u)" = 0 ] && unshare -u true 2>/dev/null; then
    D=$WORK/host
    mkdir -p "$D"
    unshare -u sh -c 'printf "../e v/il" >/proc/sys/kernel/hostname && CONVGUARD_QUIET=1 CONVGUARD_DIR="$1" LD_PRELOAD="$2" "$3" echo x' \
        sh "$D" "$SHIM" "$UNIT/prog_basic" >/dev/null 2>&1
    check "hostile host name: sanitised into the file name, inside the directory" \
        bash -c "[ \$(ls -A $D | wc -l) = 1 ] && ls -A $D | grep -qE '^\.\._e_v_il-[0-9]+\.jsonl$' && ! ls -A $WORK | grep -q il"
else
    echo "  (skipped: a hostile host name needs root and unshare -u)"
fi

# ---- errno and dlerror() across every route (PLT, dlsym, cuGetProcAddress,
# cudaGetDriverEntryPoint, dlopen/dlsym/dlvsym/dlclose), also in a forked
# child whose trace is opened inside its first hooked call
a=$("$R")
b=$(CONVGUARD_QUIET=1 run_shim "$WORK/routes" "$R" 2>/dev/null)
check "errno and dlerror() unchanged on every route" test -n "$a" -a "$a" = "$b"
check "and every route went through the shim (failures traced)" \
    jqt "$(trace_of "$WORK/routes")" 'map(select(.ev=="exit"))[0].fails | .cuMemAlloc_v2 >= 4 and .cudaMalloc == 2'
check "every route: 15 results compared" test "$(grep -c rc= <<<"$a")" = 15
a=$("$R" fork)
b=$(CONVGUARD_QUIET=1 run_shim "$WORK/routes-fork" "$R" fork 2>/dev/null)
check "errno and dlerror() unchanged on every route, in a forked child" test -n "$a" -a "$a" = "$b"
check "the forked child traced its own calls" \
    bash -c "jq -e -s '.[0].forked_from != null and (map(select(.ev | endswith(\"_failed\"))) | length >= 6)' \$(grep -l forked_from $WORK/routes-fork/*.jsonl)"

# ---- the shim's own lines on stderr (its warnings and its exit line) carry a
# folder's or a library's name: no terminal control reaches the terminal
# (ESC, BEL, a C1 CSI as UTF-8, a bidi override), whoever named the folder
D=$WORK/$'l\e]0;pwn\a\xc2\x9b2J\xe2\x80\xaeevil'
line=$(CONVGUARD_DIR="$D" LD_PRELOAD=$SHIM "$CLIENTS/client_probe" 2>&1 >/dev/null | grep '^convguard: ')
check "exit line: written, naming the trace" grep -q 'evil/.*\.jsonl' <<<"$line"
check "exit line: no ESC, BEL, C1 or bidi override in it" \
    bash -c '! LC_ALL=C grep -qP "[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]" <<<"$1"' _ "$line"
line=$(CONVGUARD_DIR="$D"/$'\e[2Jmissing/x' LD_PRELOAD=$SHIM "$CLIENTS/client_probe" 2>&1 >/dev/null | grep '^convguard: warning')
check "warning about a refused folder: written, without its controls" \
    bash -c '[ -n "$1" ] && ! LC_ALL=C grep -qP "[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]" <<<"$1"' _ "$line"

# ---- nothing in the shim formats from input: no printf family, no shell
check "the shim imports no printf/syslog/system/popen/exec" \
    bash -c "! nm -D --undefined-only $SHIM_SO | grep -qwE '(__)?[a-z]*printf(_chk)?|syslog|system|popen|exec[lv]p?e?'"
finish
