#!/usr/bin/env bash
# tests/gpu/maps_diff.sh - is a difference in /proc/self/maps between runs
# with and without the shim the shim's doing, or the program's own variation?
# Runs the conv script twice without and twice with the shim (libnvidia-*
# loads traced too), and prints which objects differ and the shim's record
# of them.   Usage: tests/gpu/maps_diff.sh [CG_BENCH value]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}/maps_diff
rm -rf "$OUT" && mkdir -p "$OUT"
SHIM=$PWD/build/libconvguard.so
make -s build/libconvguard.so >/dev/null 2>&1 || make -s LTO= build/libconvguard.so >/dev/null 2>&1 || { echo "build failed"; exit 1; }
for i in 1 2; do
    env CG_BENCH=${1:-0} python3 tests/gpu/conv_torch.py "$OUT/plain$i" > /dev/null 2>&1
    env CG_BENCH=${1:-0} CONVGUARD_EXTRA_LIBS=libnvidia CONVGUARD_QUIET=1 CONVGUARD_DIR=$OUT/t$i LD_PRELOAD=$SHIM \
        python3 tests/gpu/conv_torch.py "$OUT/shim$i" > /dev/null 2>&1
done
for f in plain1 plain2 shim1 shim2; do echo "$f: $(wc -l < $OUT/$f) objects, ptxjit: $(grep -c ptxjit $OUT/$f)"; done
echo "plain1 vs plain2:"; diff $OUT/plain1 $OUT/plain2 | sed 's/^/   /'
echo "plain1 vs shim1:"; diff $OUT/plain1 $OUT/shim1 | sed 's/^/   /'
echo "shim's record of libnvidia loads:"
cat $OUT/t1/*.jsonl | python3 -c '
import sys, json
for l in sys.stdin:
    e = json.loads(l)
    if e.get("ev") in ("lib", "dlopen", "load_unresolved") and "nvidia" in json.dumps(e):
        print("  ", {k: e.get(k) for k in ("ev", "name", "path", "ok", "error", "caller")})'
