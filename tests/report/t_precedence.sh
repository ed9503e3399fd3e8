# t_precedence.sh - the order of rules.def decides between rules that match
# the same events.  For each pair below, a trace both rules match (ambiguous
# events, and traces written by older versions of the shim: no likely_cause,
# top-level live/largest_ok, versions as strings): the report names the first
# rule first; and a build of the report with the two rows of rules.def
# swapped names the second first, so this test fails if they are swapped.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
R=$ROOT/tests/report
command -v "${CC:-cc}" >/dev/null || skip_all "no C compiler"
# its relink of the CLI with rows swapped uses the plain compiler (a rule-order test: nothing for ASan)
[ -z "${CG_SANITIZED:-}" ] || skip_all "under ASan (the relinked CLI would need the sanitizer runtimes)"

# first  second  trace (file or folder)
# (two pairs left this list with issue 27, their rules no longer match one event:
# handle_memory_held / handle_out_of_memory, one cause per failed create
# (analysis/diagnose.c; tests/report/t_diagnosis.sh reads the old trace that
# matched both), and cudnn_parts_split / cudnn_sublib_mismatch, told apart by the
# verdict's `parts` (tests/report/t_cudnn_parts.sh, corpus x-partial-copy's expect))
pairs=(
    "own_pool_took_memory alloc_failed $R/precedence/own_pool_took_memory--alloc_failed.old.jsonl"
    "lookup_workspace own_pool_took_memory $R/corpus/x-headline-legacy-lookup"
    "cudnn_cuda_major_mismatch load_cuda_lib_failed $R/corpus/r28-cudnn-for-cuda12-on-cuda13"
    "alloc_memory_held alloc_failed $R/traces/alloc_memory_held.jsonl"
    "frameworks_share_gpu own_pool_took_memory $R/corpus/r14-tf-and-jax-one-process"
    "handle_no_driver handle_failed $R/traces/handle_no_driver.jsonl"
    "load_cudnn_sublib_failed cudnn_sublib_mismatch $R/corpus/x-damaged-part-system-copy"
    "driver_older_than_runtime handle_failed $R/corpus/r16-tf-driver-too-old"
    "oom_memory_held printed_oom $R/traces/oom_memory_held.jax_two"
)

first_rule() { "$1" report --json "$2" 2>/dev/null | jq -r '.findings[0].rule // "none"'; }

# TABLE: the file that makes the rule table of rules.def (and includes it)
TABLE=tools/rules/table.c
# a convguard whose rules.def has rows $1 and $2 swapped (paragraphs of the file):
# the table compiled again beside the swapped copy, linked with the object of every other
# source (not whatever else build/tools holds: objects of files since moved)
swapped_cg() {
    local d=$WORK/swap-$1-$2 obj
    obj=$(basename "$TABLE" .c).o
    mkdir -p "$d"
    cp "$ROOT/$TABLE" "$d/"
    awk -v a="RULE($1," -v b="RULE($2," 'BEGIN { RS = ""; ORS = "\n\n" }
        { p[NR] = $0; if (index("\n" $0, "\n" a)) ia = NR; if (index("\n" $0, "\n" b)) ib = NR }
        END { t = p[ia]; p[ia] = p[ib]; p[ib] = t; for (i = 1; i <= NR; i++) print p[i] }' \
        "$ROOT/tools/rules/rules.def" >"$d/rules.def"
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -O0 -I"$ROOT/$(dirname "$TABLE")" -I"$ROOT/tools" -I"$ROOT/shim" \
        -c "$d/$(basename "$TABLE")" -o "$d/$obj" &&
        ${CC:-cc} -o "$d/convguard" $(cd "$ROOT" && find tools -name '*.c' ! -path "$TABLE" | sort | sed "s|^\(.*\)\.c\$|$BUILD_DIR/\1.o|") \
            "$d/$obj" -ljansson -ldl -lm -lpthread &&
        echo "$d/convguard"
}

for p in "${pairs[@]}"; do
    read -r a b trace <<<"$p"
    check "$a before $b in rules.def" bash -c "grep -n '^RULE($a,' '$ROOT/tools/rules/rules.def' | cut -d: -f1 >'$WORK/na';
        grep -n '^RULE($b,' '$ROOT/tools/rules/rules.def' | cut -d: -f1 >'$WORK/nb'; [ \$(cat '$WORK/na') -lt \$(cat '$WORK/nb') ]"
    got=$(first_rule "$CG" "$trace")
    check "$(basename "$trace"): $a first (got $got)" test "$got" = "$a"
    sw=$(swapped_cg "$a" "$b")
    if [ -z "$sw" ]; then
        fail "$a/$b: the swapped build failed"
        continue
    fi
    got=$(first_rule "$sw" "$trace")
    check "$(basename "$trace"): with $a and $b swapped, $b first (got $got): the order decides" test "$got" = "$b"
done
finish
