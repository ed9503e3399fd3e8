# test_trace.sh - the trace writer's lines are valid JSON whatever they hold.
source "$(dirname "$0")/../lib.sh"
# The program removes its file at the end: what it wrote is read through a
# second link made here first (its O_TRUNC keeps the inode).
: > "$WORK/t.jsonl"
ln "$WORK/t.jsonl" "$WORK/kept.jsonl"
out=$("$UNIT/test_trace" "$WORK/t.jsonl" "$WORK/other" 2>"$WORK/err")
T=$WORK/kept.jsonl
check "every line parses as JSON" jq -e -s 'length == 6' "$T"
check "quotes and backslashes round-trip" jqt "$T" '.[0].quote == "a\"b\\c"'
check "control characters escaped" jqt "$T" '.[0].ctrl == "tab\tnl\ncr\rbell\u0007"'
check "valid UTF-8 kept" jqt "$T" '.[0].utf8 == "café 日"'
check "invalid UTF-8 escaped byte by byte" jqt "$T" '.[0].bad_utf8 == "x\u00ff\u00fey\u00c3"'
check "NULL string is null" jqt "$T" '.[0].null == null'
check "INT64_MIN exact" jqt "$T" '.[1].neg == -9223372036854775808'
check "UINT64_MAX exact text" grep -q '"big":18446744073709551615' "$T"
check "hex as string" jqt "$T" '.[1].hex == "0x7f12abcd"'
check "oversized event truncated and marked" jqt "$T" '.[2].truncated == true and .[2].ev == "huge"'
check "oversized string truncated and marked" jqt "$T" '.[3].truncated == true and (.[3] | has("s") | not)'
check "seq numbers in order" jqt "$T" '[.[].seq] == [0,1,2,3,5,4]'
check "reused descriptor never written" test ! -s "$WORK/other"
check "reused descriptor: a trace_gap (fd reused, nothing lost), then the event, in the file reopened by its path" \
    jqt "$T" '.[4].ev == "trace_gap" and .[4].reason == "fd reused" and .[4].lost == 0 and .[5].ev == "after_reuse"'
check "reused descriptor: nothing dropped, the new descriptor above the old one and at least 100" \
    bash -c "echo '$out' | grep -qx 'dropped=0 reopened_above=1'"
check "closed and the file removed: tracing off, the event counted, one warning" \
    bash -c "echo '$out' | grep -qx 'dropped=1 off=1' && [ \$(grep -c 'tracing off' '$WORK/err') = 1 ] && ! grep -q after_removal '$T'"
finish
