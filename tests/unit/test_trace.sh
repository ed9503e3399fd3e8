# test_trace.sh - the trace writer's lines are valid JSON whatever they hold.
source "$(dirname "$0")/../lib.sh"
T=$WORK/t.jsonl
out=$("$UNIT/test_trace" "$T" "$WORK/other")
check "every line parses as JSON" jq -e -s 'length == 4' "$T"
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
check "seq numbers in order" jqt "$T" '[.[].seq] == [0,1,2,3]'
check "reused descriptor never written" test ! -s "$WORK/other"
check "the refused event is counted as dropped" test "$out" = "dropped=1"
finish
