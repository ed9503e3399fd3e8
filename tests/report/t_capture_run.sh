# t_capture_run.sh - `convguard run` passes the program's stderr through byte for
# byte and keeps its tail beside the traces, while the program sees what it
# would see without convguard: a terminal stays a terminal (same settings and
# window size, resizes followed), a pipe a pipe, a file the file; exit status,
# death by signal, Ctrl-C and SIGTERM as without it; a program that closes its
# stderr or leaves a daemon holding it does not keep convguard waiting.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
P=$BUILD_DIR/report/stderr_probe
R=$BUILD_DIR/report/pty_run
[ -x "$P" ] && [ -x "$R" ] || skip_all "test programs missing (make test builds them)"
cd "$WORK"
# a stand-in libcudart.so.13 for the probe to load: the shim writes a trace, so the capture is kept
mkdir -p "$WORK/fake"
cp "$(ldconfig -p | sed -n 's/.*libm\.so\.6 (libc6,x86-64) => //p' | head -1)" "$WORK/fake/libcudart.so.13"
export PROBE_DLOPEN=$WORK/fake/libcudart.so.13
run() { "$CG" run --quiet --dir "$WORK/$1" -- "${@:2}"; } # DIR CMD...: traces and capture in DIR
cap() { ls "$WORK/$1"/*.stderr 2>/dev/null; }              # the capture file of DIR
hdr() { head -1 "$(cap "$1")" | jq -r "$2"; }               # a header field
# the tail section of DIR's capture is the end of FILE, byte for byte
tail_is_end_of() {
    local c hl tb
    c=$(cap "$1") && hl=$(head -1 "$c" | wc -c) && tb=$(head -1 "$c" | jq '.sections[0].bytes') &&
        [ "$tb" -gt 0 ] && cmp <(tail -c "$tb" "$2") <(tail -c +$((hl + 1)) "$c" | head -c "$tb")
}
wait_ready() { for _ in $(seq 100); do grep -q ready "$1" 2>/dev/null && return; sleep 0.05; done; } # the probe's handlers are set
prefix_is() { cmp <(head -c "$(stat -c%s "$2")" "$1") "$2"; } # FILE starts with FILE2

# binary data, "\r\n" and lone "\r" (what a pty's newline handling could change), no final newline
{ printf 'a\r\nb\n\r\r\nx\r'; head -c 300000 /dev/urandom; printf '\r\n\n\rend, no newline\r'; } > data

# ---- a pipe
run p "$P" bytes data 2> >(cat > out.pipe)
sleep 0.3
check "pipe: the bytes pass through unchanged" prefix_is out.pipe data
check "pipe: the capture says pipe and counts every byte" test "$(hdr p '.mode + " " + (.bytes|tostring)')" = "pipe $(stat -c%s data)"
check "pipe: the kept tail is the end of the output, byte for byte" tail_is_end_of p data
check "pipe: the tail is bounded (256 KiB)" test "$(hdr p '.sections[0].bytes')" -le 262144
check "a run that leaves no trace (no CUDA library): no capture either" \
    bash -c "PROBE_DLOPEN= '$CG' run --quiet --dir '$WORK/none' -- '$P' close 2>/dev/null >/dev/null; ! ls '$WORK/none'/*.stderr"
check "pipe: the capture file is private (0600) and named <host>-<pid>.stderr" \
    bash -c "[ \"\$(stat -c %a '$(cap p)')\" = 600 ] && basename '$(cap p)' | grep -qE '^[A-Za-z0-9._-]+-[0-9]+\.stderr$'"

run pn "$P" bytes data 2>/dev/null
check "/dev/null: the program gets a pipe, the output is still kept" test "$(hdr pn .mode)" = pipe
check "/dev/null: ... byte for byte" tail_is_end_of pn data

# ---- a file: the program writes to it itself; the tail is read back from it
run f "$P" bytes data 2> out.file
check "file: the bytes are in the file unchanged" prefix_is out.file data
check "file: the capture reads it back (mode file)" test "$(hdr f .mode)" = file
check "file: the kept tail is the end of what the program wrote" tail_is_end_of f data
printf 'before the run\n' > out.app
run fa "$P" bytes data 2>> out.app
check "file opened for append: earlier content is not in the capture" \
    bash -c "! grep -aq 'before the run' '$(cap fa)' && [ \"\$(head -1 '$(cap fa)' | jq .bytes)\" = $(stat -c%s data) ]"

# ---- a terminal: what the terminal receives is what it receives without convguard
"$R" -o base.tty -- "$P" bytes data
"$R" -o cg.tty -- "$CG" run --quiet --dir "$WORK/t" -- "$P" bytes data
check "terminal: the terminal gets the same bytes as without convguard" prefix_is cg.tty base.tty
check "terminal: the capture says pty" test "$(hdr t .mode)" = pty
check "terminal: the kept tail is what the program wrote (not the pty's \\r\\n)" tail_is_end_of t data

# ---- what the program sees: fd kinds, isatty, window size, terminal settings
"$R" -s 33x111 -o tty.base -- "$P" tty
"$R" -s 33x111 -o tty.cg -- "$CG" run --quiet --dir "$WORK/tt" -- "$P" tty
probe_lines() { tr -d '\r' < "$1" | grep -E '^(fd[0-9]|size|termios)'; }
same_probe() { diff <(probe_lines "$1") <(probe_lines "$2") && grep -q 'size 33x111' "$2"; }
check "terminal: isatty, window size (33x111), termios and open mode of fd 0-2 as without convguard" \
    same_probe tty.base tty.cg
check "pipe: fd 2 is a pipe as without convguard" \
    bash -c "[ \"\$('$P' tty 2> >(cat >/dev/null) | grep '^fd2')\" = \"\$('$CG' run --quiet --dir '$WORK/k1' -- '$P' tty 2> >(cat >/dev/null) | grep '^fd2')\" ]"
check "file: fd 2 is the file itself (not a pipe)" \
    bash -c "'$CG' run --quiet --dir '$WORK/k2' -- '$P' tty 2>k2.err | grep -qx 'fd2 file isatty=0'"
"$R" -s 24x80 -r 50x132@500 -o winch.tty -- "$CG" run --quiet --dir "$WORK/w" -- "$P" winch
check "terminal: a resize reaches the program's stderr (24x80, then 50x132)" \
    bash -c "tr -d '\r' < winch.tty | grep -E '^size' | tr '\n' ' ' | grep -qx 'size 24x80 size 50x132 '"
"$CG" run --quiet --no-capture --dir "$WORK/n" -- "$P" tty 2>n.err > n.out
check "(the probe leaves a trace)" bash -c "ls '$WORK/n'/*.jsonl"
check "--no-capture: no capture file, the program gets convguard's own stderr" \
    bash -c "! ls '$WORK/n'/*.stderr 2>/dev/null && grep -qx 'fd2 file isatty=0' n.out"
"$CG" run --quiet --dir "$WORK/c" -- "$P" tty 2>&- > c.out
check "closed stderr: no capture, the program's stderr stays closed" \
    bash -c "! ls '$WORK/c'/*.stderr 2>/dev/null && grep -qx 'fd2 closed isatty=0' c.out"
"$CG" run --quiet --dir "$WORK/ro" -- "$P" tty > ro.out 2< data
check "read-only stderr: no capture" bash -c "! ls '$WORK/ro'/*.stderr 2>/dev/null && grep -q 'fd2 flags r$' ro.out"

# ---- exit status and signals, for each kind of stderr
for how in pipe file tty; do
    for sig in 9 15; do
        case $how in
        pipe) run "k$how$sig" "$P" kill $sig 2> >(cat >/dev/null); rc=$? ;;
        file) run "k$how$sig" "$P" kill $sig 2> "k$how$sig.err"; rc=$? ;;
        tty) "$R" -o "k$sig.tty" -- "$CG" run --quiet --dir "$WORK/k$how$sig" -- "$P" kill $sig; rc=$? ;;
        esac
        check "$how: death by signal $sig comes back as $((128 + sig))" test $rc = $((128 + sig))
    done
done
run x1 "$P" close 2> >(cat >/dev/null) >/dev/null
check "exit status 3 comes back" test $? = 3
"$R" -i 500 -o int.tty -- "$CG" run --quiet --dir "$WORK/i" -- "$P" trap
rc=$?
check "terminal Ctrl-C: the program gets SIGINT once, convguard returns its status (5)" \
    bash -c "[ $rc = 5 ] && tr -d '\r' < int.tty | grep -q 'got SIGINT x1 SIGTERM x0'"
# job control: Ctrl-Z stops the job (convguard and the program), `fg` continues it, as without convguard
jobctl() { "$R" -z 400 -o "$1" -- bash --norc -c "set -m; ${*:2}; echo \"after stop \$?\"; fg >/dev/null; echo \"status \$?\""; }
jobctl z0.tty "$P" trap
jobctl z1.tty "$CG" run --quiet --dir "$WORK/z" -- "$P" trap
job_lines() { tr -d '\r' < "$1" | grep -E '^(after stop|got|status)'; }
check "Ctrl-Z and fg: stopped (148), continued, the program's status (5), as without convguard" \
    bash -c "diff <($(declare -f job_lines); job_lines z0.tty) <($(declare -f job_lines); job_lines z1.tty) && grep -q 'after stop 148' z1.tty && grep -q 'status 5' z1.tty"
"$CG" run --quiet --dir "$WORK/s" -- "$P" trap 2> >(cat > term.err) > term.ready &
cg=$!
wait_ready term.ready
kill -TERM $cg
wait $cg
rc=$?
sleep 0.2
check "SIGTERM to convguard: the program gets it once, its status comes back" \
    bash -c "[ $rc = 5 ] && grep -q 'got SIGINT x0 SIGTERM x1' term.err"
"$CG" run --quiet --dir "$WORK/s2" -- "$P" trap 2> >(cat > int.err) > int.ready &
cg=$!
wait_ready int.ready
kill -INT $cg
wait $cg
rc=$?
sleep 0.2
check "SIGINT to convguard alone: passed on once" bash -c "[ $rc = 5 ] && grep -q 'got SIGINT x1 SIGTERM x0' int.err"

"$CG" run --quiet --dir "$WORK/early" -- sleep 7.31 2>/dev/null &
cg=$!
# at once when convguard runs (not earlier: bash would run this script's EXIT trap in the
# forked shell it kills), before its handlers can be in place
exe=$(readlink -f "$CG")
for _ in $(seq 100000); do [ "$(readlink /proc/$cg/exe 2>/dev/null)" = "$exe" ] && break; done
kill -TERM $cg
wait $cg
rc=$?
sleep 0.2
check "SIGTERM at once after the launch: passed on, nothing left running (exit $rc)" \
    bash -c "[ $rc = 143 ] && ! ps -eo args | grep -q '^sleep 7[.]31'"

# ---- programs that close stderr or leave it open behind them
t0=$(date +%s%N)
run cl "$P" close 2> >(cat > close.err) > close.out
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "a program that closes its stderr: no hang (exit 3 after ${ms} ms, the program sleeps 300)" \
    bash -c "[ $rc = 3 ] && [ $ms -lt 3000 ] && grep -qx closed close.out"
sleep 0.2
check "... what it wrote before closing is passed and kept" bash -c "grep -q 'closing stderr' close.err && grep -aq 'closing stderr' '$(cap cl)'"
t0=$(date +%s%N)
run dm "$P" daemon 2> >(cat > daemon.err)
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "a daemon keeps stderr open: convguard returns when the program exits (${ms} ms; the daemon writes after 2000)" \
    bash -c "[ $rc = 0 ] && [ $ms -lt 1500 ]"
check "... the capture has the program's line and says the rest was handed over" \
    bash -c "grep -aq 'parent line' '$(cap dm)' && [ \"\$(head -1 '$(cap dm)' | jq .handed_over)\" = true ]"
sleep 2.5
check "... and the daemon's later line still reaches stderr (through the forwarder)" grep -q 'late line' daemon.err
"$R" -t dmt.ms -o daemon.tty -- "$CG" run --quiet --dir "$WORK/dt" -- "$P" daemon
check "terminal: the same (convguard exits at once, the daemon's line arrives 2 s later)" \
    bash -c "[ \$(cat dmt.ms) -lt 1500 ] && grep -q 'late line' daemon.tty"

# ---- when our own stderr goes away, the program meets it as it would without convguard
"$CG" run --quiet --dir "$WORK/ep" -- "$P" spew 100000000 2>&1 >/dev/null | head -c 1000 >/dev/null
rc=${PIPESTATUS[0]}
check "stderr's reader exits: the program dies of SIGPIPE (141) instead of writing on" test "$rc" = 141
finish
