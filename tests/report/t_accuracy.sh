# t_accuracy.sh - `make accuracy` in the test suite: every case of the corpus
# of real-world failures (tests/report/corpus/) gets the expected rule first,
# with the expected words in its cause, fix and "you see"; and the noise
# checks a case's expect file cannot say.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
C=$ROOT/tests/report/corpus

CG=$CG bash "$ROOT/tests/report/accuracy.sh" >"$WORK/acc" 2>&1
rc=$?
sed 's/^/    /' "$WORK/acc"
check "make accuracy: every case right ($(tail -1 "$WORK/acc"))" test $rc = 0
n=$(ls -d "$C"/*/ | wc -l)
check "every case folder has an expect file and traces" bash -c \
    "for d in '$C'/*/; do [ -f \"\$d/expect\" ] && ls \"\$d\"/*.jsonl >/dev/null || exit 1; done"
check "$n cases, one per Linux row of real-world-failures.md that can be done (README.md lists the rest)" \
    bash -c "for r in 1 2 3 4 5 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28; do grep -qx \"row: \$r\" '$C'/*/expect || exit 1; done"
for f in "$C"/*/expect; do
    for k in row what source rule cause fix; do
        grep -q "^$k: ." "$f" || fail "$(basename "$(dirname "$f")"): expect has no $k"
    done
done

# "the GPU was never used" once per run, about the process that ran the framework
"$CG" report --json "$C/x-gpu-never-used-tree" >"$WORK/j"
check "a tree of 5 processes without CUDA: 'GPU never used' once" \
    jq -e '[.findings[] | select(.rule == "gpu_never_used")] | length == 1' "$WORK/j"
check "... about the process that imported the framework (pid 7010), not a shell helper" \
    jq -e '[.findings[] | select(.rule == "gpu_never_used") | .processes[] as $i | $i] as $p
           | [.processes[$p[]].pid] == [7010]' "$WORK/j"
check "... and no 'no exit line' note for them" bash -c "! '$CG' report '$C/x-gpu-never-used-tree' | grep -q 'no exit line'"

# the headline comes before the other findings of its process
"$CG" report --json "$C/x-headline-legacy-lookup" >"$WORK/j"
check "headline: lookup_workspace first, the pool after it" \
    jq -e '[.findings[].rule] | .[0] == "lookup_workspace" and index("own_pool_took_memory") > 0' "$WORK/j"
finish
