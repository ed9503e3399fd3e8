#!/usr/bin/env bash
# tests/report/corpus/record.sh - records the corpus cases that the test
# doubles can reproduce: the real shim, real loads by glibc, the doubles'
# cuDNN dispatcher probing its parts as NVIDIA's does.  Each case's folders
# are laid out as the real failure had them (a damaged part first in
# LD_LIBRARY_PATH, a partial copy, a pip wheel folder off the search path...).
# The traces are written into the case folders (*.jsonl) and committed;
# `make accuracy` reads them.  Run after `make all doubles clients`:
#   tests/report/corpus/record.sh [CASE...]
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
C=$ROOT/tests/report/corpus
B=$ROOT/build
D=$B/doubles
SHIM=$B/libconvguard.so
BASE=/tmp/cg-corpus # fixed, so that paths in the traces stay the same between recordings
want=("$@")

wanted() { [ ${#want[@]} -eq 0 ] && return 0; local w; for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }

# record CASE ENV... -- CMD...: runs CMD under the shim with a clean trace
# folder and copies the traces of every process into the case
record() {
    local case=$1; shift
    local env=()
    while [ "$1" != "--" ]; do env+=("$1"); shift; done
    shift
    local out=$BASE/$case/traces
    rm -rf "$out"; mkdir -p "$out"
    # This machine's ld.so.cache lists NVIDIA's cuDNN: hidden (a private
    # mount namespace) so that the case has only the folders it sets up.
    local hide=()
    if [ "${KEEP_CACHE:-0}" = 1 ]; then
        :
    elif unshare -m --propagation private true 2>/dev/null; then
        hide=(unshare -m --propagation private sh -c 'mount --bind /dev/null /etc/ld.so.cache && exec "$@"' sh)
    else
        echo "record.sh: cannot hide ld.so.cache (unshare -m needs root): $case may see the system's cuDNN" >&2
    fi
    "${hide[@]}" env -i PATH=/usr/bin:/bin HOME=/tmp CONVGUARD_DIR="$out" CONVGUARD_QUIET=1 LD_PRELOAD="$SHIM" \
        "${env[@]}" "$@" >/dev/null 2>&1
    rm -f "$C/$case"/*.jsonl
    cp "$out"/*.jsonl "$C/$case/" 2>/dev/null || echo "record.sh: $case left no trace" >&2
    echo "recorded $case: $(ls "$C/$case"/*.jsonl 2>/dev/null | wc -l) trace(s)"
}

cudnn9_copy() { mkdir -p "$1"; cp "$D"/cudnn9/libcudnn*.so.9 "$1"/; }

# row 4: a cuDNN library without a RUNPATH cannot find the parts next to it
if wanted r04-no-runpath; then
    d=$BASE/r04-no-runpath/cudnn
    rm -rf "$BASE/r04-no-runpath"; cudnn9_copy "$d"
    # the dispatcher rebuilt as the double is, but without -rpath $ORIGIN
    cc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -fvisibility=hidden -I"$ROOT/shim" -I"$ROOT/tests/doubles" \
        -Wl,-soname,libcudnn.so.9 -Wl,--version-script="$D/maps/libcudnn.so.9.map" \
        -o "$d/libcudnn.so.9" "$ROOT/tests/doubles/cudnn_dispatch.c" -ldl
    record r04-no-runpath LD_LIBRARY_PATH="$D/cudart:$D/cuda" -- "$B/clients/client_copyload" "$d"
fi

# row 5: the dispatcher a package ships, its parts in pip's wheel folder, off its search path
if wanted r05-wheel-not-searched; then
    sp=$BASE/r05-wheel-not-searched/venv/lib/python3.12/site-packages
    rm -rf "$BASE/r05-wheel-not-searched"; mkdir -p "$sp/ctranslate2.libs"
    cudnn9_copy "$sp/nvidia/cudnn/lib"
    mv "$sp/nvidia/cudnn/lib/libcudnn.so.9" "$sp/ctranslate2.libs/"
    record r05-wheel-not-searched LD_LIBRARY_PATH="$D/cudart:$D/cuda" -- "$B/clients/client_copyload" "$sp/ctranslate2.libs"
fi

# a part missing from the folder (H200 section "corpus" has the real one)
if wanted x-missing-part; then
    d=$BASE/x-missing-part/cudnn
    rm -rf "$BASE/x-missing-part"; cudnn9_copy "$d"; rm "$d/libcudnn_cnn.so.9"
    record x-missing-part LD_LIBRARY_PATH="$d:$D/cudart:$D/cuda" -- "$B/clients/client_tflike"
fi

# class 3: an empty libcudnn_graph.so.9 first in LD_LIBRARY_PATH ("file too short")
if wanted x-damaged-part; then
    bad=$BASE/x-damaged-part/broken
    rm -rf "$BASE/x-damaged-part"; mkdir -p "$bad"; : >"$bad/libcudnn_graph.so.9"
    record x-damaged-part LD_LIBRARY_PATH="$bad:$D/cudnn9:$D/cudart:$D/cuda" -- "$B/clients/client_tflike"
fi

# class 3 as the issue met it: the empty graph part first in LD_LIBRARY_PATH,
# and cuDNN's last probe (the bare .so) then found the system's cuDNN through
# ld.so.cache (this machine has NVIDIA's 9.19 there): two installs do mix,
# but the broken file is the cause
if wanted x-damaged-part-system-copy; then
    if ldconfig -p | grep -q 'libcudnn_graph.so '; then
        bad=$BASE/x-damaged-part-system-copy/broken
        rm -rf "$BASE/x-damaged-part-system-copy"; mkdir -p "$bad"; : >"$bad/libcudnn_graph.so.9"
        KEEP_CACHE=1 record x-damaged-part-system-copy LD_LIBRARY_PATH="$bad:$D/cudnn9:$D/cudart:$D/cuda" -- \
            "$B/clients/client_copyload" "$D/cudnn9"
    else
        echo "record.sh: x-damaged-part-system-copy needs a cuDNN 9 in ld.so.cache: kept as it is" >&2
    fi
fi

# class 4: a truncated part (a copy that did not finish) first in
# LD_LIBRARY_PATH: the loader maps it and dies of SIGBUS inside ld.so
if wanted x-truncated-part-crash; then
    t=$BASE/x-truncated-part-crash/copy
    rm -rf "$BASE/x-truncated-part-crash"; mkdir -p "$t"
    head -c 8192 "$D/cudnn9/libcudnn_graph.so.9" >"$t/libcudnn_graph.so.9"
    record x-truncated-part-crash LD_LIBRARY_PATH="$t:$D/cudnn9:$D/cudart:$D/cuda" -- "$B/clients/client_tflike"
fi

# class 5: a partial copy of the wheel's cuDNN (same version) first in LD_LIBRARY_PATH
if wanted x-partial-copy; then
    r=$BASE/x-partial-copy
    sp=$r/venv/lib/python3.12/site-packages
    rm -rf "$r"; cudnn9_copy "$sp/nvidia/cudnn/lib"; mkdir -p "$sp/nvidia_cudnn_cu13-9.1.0.70.dist-info" "$r/partial"
    cp "$D"/cudnn9/libcudnn.so.9 "$D"/cudnn9/libcudnn_graph.so.9 "$r/partial"/
    record x-partial-copy LD_LIBRARY_PATH="$r/partial:$sp/nvidia/cudnn/lib:$D/cudart:$D/cuda" -- "$B/clients/client_tflike"
fi

# row 24: a part of another build in LD_LIBRARY_PATH ("undefined symbol")
if wanted r24-undefined-symbol; then
    u=$BASE/r24-undefined-symbol/usr-local-cuda-lib64
    rm -rf "$BASE/r24-undefined-symbol"; mkdir -p "$u"
    printf 'extern int cudnnOpsVersionCheck_internal_8_9(void);\nint cgtestPart(void){return cudnnOpsVersionCheck_internal_8_9();}\n' |
        cc -shared -fPIC -x c - -o "$u/libcudnn_cnn.so.9" -Wl,-soname,libcudnn_cnn.so.9
    record r24-undefined-symbol LD_LIBRARY_PATH="$u:$D/cudnn9:$D/cudart:$D/cuda" -- "$B/clients/client_tflike"
fi

# rows 1 and 6: an older cuDNN in LD_LIBRARY_PATH wins over the one the
# framework's RUNPATH names (a framework extension linked with RUNPATH)
if wanted r01-llp-shadows-wheel; then
    r=$BASE/r01-llp-shadows-wheel
    rm -rf "$r"; cudnn9_copy "$r/venv/lib/python3.10/site-packages/torch/lib"
    old=$r/usr-local-cuda/lib64; mkdir -p "$old"
    cp "$D"/cudnn9/libcudnn.so.9 "$old/libcudnn.so.9.0.0"; ln -s libcudnn.so.9.0.0 "$old/libcudnn.so.9"
    cp "$D"/cudnn9/libcudnn_graph.so.9 "$D"/cudnn9/libcudnn_cnn.so.9 "$old"/
    tl=$r/venv/lib/python3.10/site-packages/torch/lib
    cc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -I"$ROOT/shim" -I"$ROOT/tests/doubles" -I"$ROOT/tests/clients" \
        -o "$tl/libtorch_cuda.so" "$ROOT/tests/clients/ext_torchlike.c" -Wl,--no-as-needed -L"$tl" -L"$D/cudart" \
        -l:libcudnn.so.9 -l:libcudart.so.13 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' -Wl,-rpath,"$D/cudart"
    record r01-llp-shadows-wheel LD_LIBRARY_PATH="$old:$D/cuda" -- "$B/clients/client_torchlike" "$tl/libtorch_cuda.so"
fi
