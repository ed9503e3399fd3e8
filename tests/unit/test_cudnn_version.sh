# test_cudnn_version.sh - the one cuDNN version encoder (shim/cudnn_version.h),
# and that it is the only one: no other file multiplies a major by 10000.
source "$(dirname "$0")/../lib.sh"
out=$("$UNIT/test_cudnn_version"); rc=$?
echo "$out"
check "every text encoded as expected" test $rc = 0
others=$(cd "$ROOT" && grep -rln --include='*.c' --include='*.h' --include='*.py' -E '\* *10000[^0-9]' shim tools python | grep -v '^shim/cudnn_version.h$')
check "no other encoder in shim/, tools/, python/ (${others:-none})" test -z "$others"
finish
