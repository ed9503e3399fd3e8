# test_nvversion.sh - the kernel module's version read from /proc/driver/nvidia/version's text
source "$(dirname "$0")/../lib.sh"
out=$("$UNIT/test_nvversion"); rc=$?
echo "$out"
check "every text parsed as expected" test $rc = 0
finish
