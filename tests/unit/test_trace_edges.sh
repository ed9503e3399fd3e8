# test_trace_edges.sh - the trace builder at its edges (tests/robust/test_trace_edges.c).
source "$(dirname "$0")/../lib.sh"
T=$WORK/t.jsonl
out=$("$ROBUST/test_trace_edges" "$T" 2>"$WORK/err")
check "a buffer below CG_EV_MIN: nothing written, dropped, no byte past it" grep -qx "tiny dropped=1 guard=1" <<<"$out"
check "a name that does not fit: {\"truncated\":true}, no byte past the buffer" \
    bash -c "grep -qx 'longname guard=1' <<<'$out' && head -1 $T | jq -e '. == {\"truncated\": true}'"
check "1000 closes after an overflow: no byte past the buffer, line valid" \
    bash -c "grep -qx 'nested guard=1' <<<'$out' && sed -n 2p $T | jq -e '.ev == \"nested\" and .truncated == true'"
check "every line is JSON" jq -e -s 'length > 3' "$T"
check "failure marking: *_failed, status != 0, ok false; not a nested status, not a plain event" \
    test "$(grep last_failure <<<"$out" | tr '\n' ' ')" = "call_failed last_failure=2 cudnn_handle last_failure=3 dlopen last_failure=4 conv_algos last_failure=4 lib last_failure=4 "
check "UTF-8: valid kept; surrogate, overlong, past U+10FFFF escaped byte by byte" \
    jqt "$T" 'map(select(.ev=="utf8"))[0] | .ok == "\ud83d\ude00" and .surrogate == "\u00ed\u00a0\u0080" and .overlong == "\u00e0\u0080\u00af" and .too_big == "\u00f4\u0090\u0080\u0080" and .f7 == "\u00f7\u0094\u0094\u0094"'
check "cap: one trace_capped line, one warning, exit written past the cap" \
    bash -c "jq -e -s '(map(select(.ev==\"trace_capped\")) | length) == 1 and .[-1].ev == \"exit\"' $T && [ \$(grep -c CONVGUARD_MAX_MB $WORK/err) = 1 ]"
check "cap: within 1 MiB of fillers, the rest counted" \
    bash -c "[ \$(grep -c filler $T) -lt 3000 ] && [ \$(grep '\"ev\":\"filler\"' $T | wc -c) -le 1048576 ] && grep -qx \"capped dropped=\$((1 + 3000 - \$(grep -c filler $T)))\" <<<'$out'"
finish
