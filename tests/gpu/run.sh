#!/usr/bin/env bash
# tests/gpu/run.sh - the checks that need an NVIDIA GPU, PyTorch and JAX.
# Not part of `make test` (CI has no GPU).  Usage:
#   tests/gpu/run.sh [loader] ...    (default: every section)
# Prints what it measured; writes traces under $OUT (or ./gpu-out).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
SHIM=$ROOT/build/libconvguard.so
PY=${PYTHON:-python3}
sections=${*:-loader}
make -s build/libconvguard.so >/dev/null 2>&1 || make build/libconvguard.so || { echo "build failed"; exit 1; }
# the CLI needs libjansson; where its headers are missing, a carried unpacked
# libjansson-dev in .jansson/ is linked statically (see tools/tools.mk)
J=""
[ -e /usr/include/jansson.h ] || [ ! -d .jansson ] || J="JANSSON_DIR=$ROOT/.jansson"
make -s $J build/convguard >/dev/null 2>&1 || echo "note: the convguard CLI did not build here"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

same_maps() { # name cmd...: maps with and without the shim must be identical
    local name=$1; shift
    "$@" "$OUT/$name.maps.plain" > "$OUT/$name.plain.log" 2>&1 || { echo "$name (no shim) failed:"; tail -5 "$OUT/$name.plain.log"; }
    CONVGUARD_DIR=$OUT/$name.traces LD_PRELOAD=$SHIM "$@" "$OUT/$name.maps.shim" > "$OUT/$name.shim.log" 2>&1 || { echo "$name (shim) failed:"; tail -5 "$OUT/$name.shim.log"; }
    echo "-- $name: $(head -1 "$OUT/$name.plain.log")"
    echo "   with shim: $(grep -v '^convguard:' "$OUT/$name.shim.log" | head -1)"
    grep '^convguard:' "$OUT/$name.shim.log" | sed 's/^/   /'
    if diff -q "$OUT/$name.maps.plain" "$OUT/$name.maps.shim" >/dev/null; then
        echo "   /proc/self/maps: identical ($(wc -l < "$OUT/$name.maps.plain") shared objects)"
    else
        echo "   /proc/self/maps: DIFFERENT"; diff "$OUT/$name.maps.plain" "$OUT/$name.maps.shim" | head -10
    fi
    grep -h 'libcudnn' "$OUT/$name.maps.plain" | sed 's/^/   maps: /'
    $PY tests/gpu/summarize.py "$OUT/$name.traces" | sed 's/^/   /' | head -60
    if grep -q '/usr/lib/x86_64-linux-gnu/libcudnn' "$OUT/$name.traces"/*.jsonl 2>/dev/null; then
        echo "   system cuDNN copy (/usr/lib/x86_64-linux-gnu) named in the trace"
    else
        echo "   system cuDNN copy (/usr/lib/x86_64-linux-gnu): not loaded, named nowhere in the trace"
    fi
}

for s in $sections; do
    case $s in
    loader)
        echo "== loader: PyTorch and JAX convolutions under the shim"
        ls /usr/lib/x86_64-linux-gnu/libcudnn.so* 2>/dev/null | head -3 | sed 's/^/system copy: /'
        same_maps torch_default env CG_BENCH=0 $PY tests/gpu/conv_torch.py
        same_maps torch_bench env CG_BENCH=1 $PY tests/gpu/conv_torch.py
        same_maps torch_expandable env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $PY tests/gpu/conv_torch.py
        same_maps jax env $PY tests/gpu/conv_jax.py
        ;;
    *) echo "unknown section $s" ;;
    esac
done
