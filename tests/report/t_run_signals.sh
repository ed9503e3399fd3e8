# t_run_signals.sh - `convguard run` never changes the job's exit status or
# signals (issue 26, items 7 and 8): a signal reaches the program exactly once
# whether the sender signalled convguard alone, its process group, or every
# process of the job (Slurm's cgroup kill, pkill -f), as many times as without
# convguard; a reader of stderr that went away never ends convguard with
# SIGPIPE; a program killed by a signal leaves the same wait status.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
P=$BUILD_DIR/report/stderr_probe
WS=$ROBUST/waitstatus
[ -x "$P" ] && [ -x "$WS" ] || skip_all "test programs missing (make test builds them)"
cd "$WORK"

# the job: $CMD (ending in "stderr_probe count SIG") in a session of its own,
# signalled once by HOW from the session's shell (which survives it):
#   group  kill -SIG -- -PGID (Slurm's proctrack/pgid, a shell's kill %1, timeout)
#   pid    kill -SIG PID, the pid the shell started ($!: docker stop, a launcher)
#   each   kill -SIG to every process of the session in turn (Slurm's proctrack/cgroup)
#   pkill  pkill -SIG -f 'stderr_probe count' (the pattern in $CMD only, not in argv)
cat > sess.sh <<'EOF'
how=$1 sig=$2 out=$3
trap : "$sig"
$CMD > "$out" 2>/dev/null &
pid=$!
for _ in $(seq 250); do grep -q ready "$out" 2>/dev/null && break; sleep 0.02; done
case $how in
group) kill "-$sig" -- "-$$" ;;
pid) kill "-$sig" "$pid" ;;
each) for p in $(ps -o pid= -s $$); do [ "$p" != $$ ] && kill "-$sig" "$p" 2>/dev/null; done ;;
pkill) pkill "-$sig" -f 'stderr_prob[e] count' ;;
esac
wait "$pid"; rc=$?
while [ $rc -gt 128 ] && kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
echo "rc $rc" >> "$out"
EOF
# count HOW SIG CG|-: "got N rc R" of one try, with convguard or without
count() {
    local cmd="$P count $2"
    [ "$3" = CG ] && cmd="$CG run --quiet --dir $WORK/d -- $cmd"
    rm -f out
    CMD=$cmd setsid -w bash sess.sh "$1" "$2" out
    echo "$(grep '^got' out) $(grep '^rc' out)"
}
# tries HOW SIG N: how many of N tries with convguard ended as the one without it, and it got it once
tries() {
    local want ok=0
    want=$(count "$1" "$2" -)
    [ "$want" = "got 1 rc 5" ] || { echo "without convguard: $want"; return 1; }
    for _ in $(seq "$3"); do
        got=$(count "$1" "$2" CG)
        [ "$got" = "$want" ] && ok=$((ok + 1)) || echo "  $1 $2: $got" >&2
    done
    echo "$ok/$3"
    [ $ok = "$3" ]
}
for sig in 15 2; do
    for how in group pid; do
        r=$(tries $how $sig 8)
        check "signal $sig, $how: the program gets it exactly once, as without convguard ($r)" test "$r" = 8/8
    done
done
for how in each pkill; do
    r=$(tries $how 15 2)
    check "signal 15, $how: exactly once ($r)" test "$r" = 2/2
done
for sig in 1 3 10 12 18; do
    for how in group pid each; do
        r=$(tries $how $sig 1)
        check "signal $sig, $how: exactly once ($r)" test "$r" = 1/1
    done
done

# ---- stderr's reader went away: the program's status comes back (not 141)
{ sleep 0.3; "$CG" run --dir "$WORK/p1" -- sh -c 'echo x >&2; exit 5'; } 2>&1 | true
check "closed stderr pipe: the program's exit 5 comes back" test "${PIPESTATUS[0]}" = 5
{ sleep 0.3; "$CG" run --dir "$WORK/p2" -- true; } 2>&1 | true
check "closed stderr pipe, a healthy run: 0 (its one line does not kill convguard)" test "${PIPESTATUS[0]}" = 0
"$CG" run --dir "$WORK/p3" -- sh -c 'echo x >&2; exit 5' 2>&1 | head -0
check "| head -0: 5" test "${PIPESTATUS[0]}" = 5
{ sleep 0.3; "$CG" run --no-capture --dir "$WORK/p4" -- sh -c 'exit 5'; } 2>&1 | true
check "--no-capture, closed stderr pipe: 5" test "${PIPESTATUS[0]}" = 5
# the program itself still meets the closed pipe as it would have: SIGPIPE for its own writes
{ sleep 0.3; "$CG" run --dir "$WORK/p5" -- sh -c 'sleep 0.5; while :; do echo x >&2; done'; } 2>&1 | true
check "a program that writes on to the closed pipe dies of SIGPIPE (141) as without convguard" test "${PIPESTATUS[0]}" = 141
"$CG" run --quiet --dir "$WORK/p6" -- grep SigIgn /proc/self/status > ign.cg 2>/dev/null
grep SigIgn /proc/self/status > ign.0
check "... the program's ignored signals are as without convguard (convguard's SIGPIPE ignored for itself only)" cmp ign.0 ign.cg

# ---- a signal while convguard prints its report (its stderr a full pipe): the program's status
mkfifo full
exec 7<>full
head -c 65536 /dev/zero >&7
"$CG" run --dir "$WORK/f" -- sh -c 'exit 5' 2>&7 &
cg=$!
sleep 0.5
kill -TERM $cg
sleep 0.3
timeout 2 cat <&7 >/dev/null
wait $cg
check "SIGTERM while the report waits on stderr: the program's exit 5, not 143" test $? = 5
exec 7>&-

# ---- death by signal: the same wait status as without convguard (no core: ulimit -c 0 for both)
ulimit -c 0
for sig in 9 11 6 15 2; do
    a=$("$WS" "$P" kill $sig 2>/dev/null)
    b=$("$WS" "$CG" run --dir "$WORK/w$sig" -- "$P" kill $sig 2>/dev/null)
    check "killed by signal $sig: '$b', as without convguard '$a'" test "$a" = "$b" -a "$a" = "signal $sig core 0"
done
a=$("$WS" sh -c 'exit 7')
b=$("$WS" "$CG" run --dir "$WORK/w7" -- sh -c 'exit 7' 2>/dev/null)
check "exit 7: '$b'" test "$a" = "$b"
# the sentinel is gone with convguard
check "nothing of convguard left running (its cg-signals sentinel)" bash -c "! pgrep -f '^cg-signals $P'"
finish
