# test_fallback.sh - the fallback policy's pure functions (limit, ordering, reserve)
source "$(dirname "$0")/../lib.sh"
out=$("$UNIT/test_fallback")
echo "$out" | grep FAIL
check "fallback policy: limit, stable ordering, unusable sets, reserve" test "$out" = "test_fallback: ok"
finish
