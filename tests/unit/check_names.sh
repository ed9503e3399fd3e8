# check_names.sh - the shim's cuDNN status names are the real library's.
source "$(dirname "$0")/../lib.sh"
LIB=/usr/local/cuda/lib/libcudnn.so.9
[ -e $LIB ] || LIB=/usr/local/cuda/lib64/libcudnn.so.9
[ -e "$LIB" ] || skip_all "no real libcudnn.so.9"
out=$("$UNIT/check_names" "$LIB")
check "status names match cudnnGetErrorString of the real cuDNN ($(echo "$out" | tail -1))" "$UNIT/check_names" "$LIB"
finish
