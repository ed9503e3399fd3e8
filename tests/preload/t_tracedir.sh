# t_tracedir.sh - who may write the trace folder (shim/core/safedir.c,
# docs/robustness.md "The trace folder"), by hand (LD_PRELOAD): a symlink or a
# folder another user planted or can change is refused before anything is
# resolved, with one warning at the first CUDA event and the program unchanged;
# a process that never touches CUDA neither warns nor makes a folder.
# (`convguard run`'s side: tests/report/t_run_dir.sh.)
source "$(dirname "$0")/../lib.sh"
P=$UNIT/prog_basic
export PROG_CUDA_LIB=$DOUBLES/cuda/libcuda.so.1 # prog_basic touches a CUDA-family library: a trace is due
host=$(uname -n | tr -c 'A-Za-z0-9._\n-' _)
ATT=1234 # the attacker's uid

# prog_basic under the shim with CONVGUARD_DIR=$1 as root: "same" on stdout,
# status 0, exactly one warning and nothing else on stderr
one_warning() {
    local out rc
    out=$(CONVGUARD_DIR=$1 LD_PRELOAD=$SHIM "$P" echo same 2>"$WORK/err"); rc=$?
    [ "$out" = same ] && [ $rc = 0 ] && [ "$(grep -c '^convguard: warning: trace folder refused' "$WORK/err")" = 1 ] &&
        [ "$(grep -vc '^convguard: warning' "$WORK/err")" = 0 ]
}
nothing_in() { [ -z "$(ls -A "$1")" ]; }

# ---- item 11: the folder comes with the first event, not with the process
mkdir -p "$WORK/fresh/sub"
(cd "$WORK/fresh/sub" && LD_PRELOAD=$SHIM true && LD_PRELOAD=$SHIM ls >/dev/null && LD_PRELOAD=$SHIM sh -c 'cd /; true')
check "no CUDA: true, ls and sh leave no ./convguard-logs behind" nothing_in "$WORK/fresh/sub"
check "so the folder they ran in can be removed (rmdir)" rmdir "$WORK/fresh/sub"
mkdir -p "$WORK/fresh/cuda"
(cd "$WORK/fresh/cuda" && CONVGUARD_QUIET=1 LD_PRELOAD=$SHIM "$P" echo x >/dev/null 2>&1)
check "a CUDA process makes ./convguard-logs (0700) with its trace" \
    bash -c "[ \$(stat -c %a '$WORK/fresh/cuda/convguard-logs') = 700 ] && ls '$WORK/fresh/cuda/convguard-logs/'*.jsonl"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "  (skipped: another user's folders and links need root and setpriv)"
    finish
    exit $?
fi
as_att() { (cd / && setpriv --reuid=$ATT --regid=$ATT --clear-groups "$@"); }
chmod 0711 "$WORK"
mkdir -p "$WORK/pub" "$WORK/victim"
chmod 1777 "$WORK/pub" # a /tmp of our own: root's, sticky
touch "$WORK/mark"
trap 'find /etc -maxdepth 1 -newer "$WORK/mark" -name "$host-*" -delete 2>/dev/null; rm -rf "$WORK"' EXIT

# ---- item 2: the attacker's folder holds logs -> /etc; root traces into it
as_att mkdir "$WORK/pub/att"
as_att ln -s /etc "$WORK/pub/att/logs"
as_att ln -s "$WORK/victim" "$WORK/pub/att/vlogs"
check "root, CONVGUARD_DIR=<uid $ATT's folder>/logs -> /etc: one warning, the program unchanged" \
    one_warning "$WORK/pub/att/logs"
check "... nothing written in /etc" test -z "$(find /etc -maxdepth 1 -newer "$WORK/mark" -name "$host-*")"
check "... the warning names the folder and its owner" grep -q "pub/att: a folder another user can change.*uid $ATT" "$WORK/err"
check "the same through a link to a folder of root's: refused, nothing written there" \
    bash -c "$(declare -f one_warning nothing_in); P=$P SHIM=$SHIM WORK=$WORK; one_warning $WORK/pub/att/vlogs && nothing_in $WORK/victim"
# a link of the attacker's in root's sticky folder (fs.protected_symlinks' case)
as_att ln -s "$WORK/victim" "$WORK/pub/link"
check "a symlink of uid $ATT in a sticky folder: not followed, one warning" one_warning "$WORK/pub/link"
check "... the warning says whose link it is" grep -q "pub/link: a symlink of another user, not followed: owner uid $ATT" "$WORK/err"
check "... nothing written through it" nothing_in "$WORK/victim"
ln -s "$WORK/victim" "$WORK/pub/rootlink"
check "control: root's own link in the same folder is followed" \
    bash -c "CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/pub/rootlink LD_PRELOAD=$SHIM $P echo x >/dev/null 2>$WORK/e2 && ! test -s $WORK/e2 && ls $WORK/victim/*.jsonl"
rm -f "$WORK/victim"/*

# ---- item 2: a parent others can write (not sticky): they could swap the folder
for mode in 0777 0770 0707; do
    mkdir -p "$WORK/open-$mode/logs"
    chmod "$mode" "$WORK/open-$mode"
    chgrp $ATT "$WORK/open-$mode"
    check "a parent of mode $mode (root's, not sticky): refused, one warning, nothing written" \
        bash -c "$(declare -f one_warning nothing_in); P=$P SHIM=$SHIM WORK=$WORK; one_warning $WORK/open-$mode/logs && nothing_in $WORK/open-$mode/logs && grep -q 'other users can write' $WORK/err"
done
mkdir -p "$WORK/pub/mine"
check "control: a folder of ours under root's sticky one (/tmp/x): traced, no word" \
    bash -c "CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/pub/mine LD_PRELOAD=$SHIM $P echo x >/dev/null 2>$WORK/e3 && ! test -s $WORK/e3 && ls $WORK/pub/mine/*.jsonl"
# the default ./convguard-logs in a working folder others can write
(cd "$WORK/open-0777" && LD_PRELOAD=$SHIM "$P" echo same >"$WORK/out" 2>"$WORK/err")
check "default ./convguard-logs in a world-writable working folder: refused, one warning, not made" \
    bash -c "[ \"\$(cat $WORK/out)\" = same ] && [ \$(grep -c '^convguard: warning' $WORK/err) = 1 ] && ! test -e $WORK/open-0777/convguard-logs"

# a user's own group-writable folder, its group its own (Red Hat's umask 002):
# nobody else can write it, so it is no reason to refuse
if ! (cd / && setpriv --reuid=$ATT --regid=$ATT --clear-groups test -r "$SHIM_SO") 2>/dev/null; then
    echo "  (skipped: uid $ATT cannot read $SHIM_SO: a checkout under a private directory)"
else
    as_att mkdir -m 0775 "$WORK/pub/upg"
    check "uid $ATT's own folder, group-writable by its own group (gid $ATT): traced" \
        as_att env CONVGUARD_QUIET=1 CONVGUARD_DIR="$WORK/pub/upg/logs" LD_PRELOAD="$SHIM" "$P" echo x
    check "... the trace is there, and no warning" bash -c "ls $WORK/pub/upg/logs/*.jsonl"
    as_att mkdir -m 0775 "$WORK/pub/grp"
    chgrp 1235 "$WORK/pub/grp"
    check "uid $ATT's folder, group-writable by another group: refused" \
        bash -c "cd / && setpriv --reuid=$ATT --regid=$ATT --clear-groups env CONVGUARD_QUIET=1 CONVGUARD_DIR=$WORK/pub/grp/logs LD_PRELOAD=$SHIM $P echo x 2>&1 >/dev/null | grep -q 'other users can write' && ! test -e $WORK/pub/grp/logs"
fi

# ---- item 10: a refused folder is said once, at the first CUDA event
# uid 1234's own folder: refused (the shim of main warned in each process at its start)
for quiet in 0 1; do
    CONVGUARD_QUIET=$quiet CONVGUARD_DIR=$WORK/pub/att LD_PRELOAD=$SHIM \
        bash -c 'ls >/dev/null; date >/dev/null; echo hi | cat | wc -l >/dev/null' 2>"$WORK/err"
    check "CONVGUARD_QUIET=$quiet: a shell pipeline that never touches CUDA: not a word (was one per process)" \
        test ! -s "$WORK/err"
    CONVGUARD_QUIET=$quiet CONVGUARD_DIR=$WORK/pub/att LD_PRELOAD=$SHIM \
        bash -c 'ls >/dev/null; "$1" echo x | cat | wc -l >/dev/null' sh "$P" 2>"$WORK/err"
    check "CONVGUARD_QUIET=$quiet: the same with one CUDA process in it: one warning, nothing else" \
        bash -c "[ \$(grep -c '^convguard: warning: trace folder refused' $WORK/err) = 1 ] && [ \$(grep -c . $WORK/err) = 1 ]"
done
out=$(CONVGUARD_DIR=$WORK/pub/att LD_PRELOAD=$SHIM "$P" fork 2>"$WORK/err" | tr '\n' ' ')
check "a forked child of a refused process: no second warning, the program unchanged" \
    bash -c "[ '$out' = 'child parent 0 ' ] && [ \$(grep -c . $WORK/err) = 1 ]"
check "... and nothing written" test "$(ls -A "$WORK/pub/att" | wc -l)" = 2 # its two links
finish
