#!/usr/bin/env bash
# tests/gpu/corpus2/record.sh OUTDIR [CASE...] - runs each case of tests/gpu/corpus2 (every folder
# with an `expect`, or the CASEs named; CORPUS2_CASES too) under `convguard run --dir OUTDIR/CASE`,
# then `convguard report --json` on that folder.  Leaves per case, beside the folder:
#   CASE.out  the program's stdout     CASE.err   its stderr and convguard's (the report at the end)
#   CASE.rc   run's exit status        CASE.json  the report; CASE.report_rc its exit status
#   CASE.secs wall time                CASE.build the compiler's output (C cases)
# score.py reads them.  Called by tests/gpu/run.sh corpus2; needs build/convguard and the shim.
# Environment: PY (python3), CG (build/convguard), NVCC, CC; CORPUS2_BUDGET_S (default 420): no case
# starts after that many seconds (the rest are "not run"), so the section ends within a device call.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
CASES_DIR=${CORPUS2_DIR:-$HERE}
C2=${1:?usage: record.sh OUTDIR [CASE...]}
shift
mkdir -p "$C2" "$C2/bin"
C2=$(cd "$C2" && pwd)
CG=${CG:-$ROOT/build/convguard}
PY=${PY:-python3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CC=${CC:-gcc}
# the C program that uses cuDNN loads the wheel's copy (what PyTorch and JAX map), by path
export CG2_CUDNN=${CG2_CUDNN:-$($PY -c 'import glob, site
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    for f in sorted(glob.glob(sp + "/nvidia/*/lib/libcudnn.so.9")):
        print(f); raise SystemExit' 2>/dev/null)}
[ -n "$CG2_CUDNN" ] || unset CG2_CUDNN
cases=${*:-${CORPUS2_CASES:-$(cd "$CASES_DIR" && for d in */; do [ -f "$d/expect" ] && echo "${d%/}"; done)}}
field() { sed -n "s/^$1: *//p" "$2" | head -1; }
START=$(date +%s)

for c in $cases; do
    d=$CASES_DIR/$c
    exp=$d/expect
    if [ ! -f "$exp" ]; then
        echo "-- $c: no such case"
        continue
    fi
    rm -rf "${C2:?}/$c" "$C2/$c".*
    if [ $(( $(date +%s) - START )) -ge "${CORPUS2_BUDGET_S:-420}" ]; then
        echo "-- $(printf '%-30s' "$c") not run: the time budget (CORPUS2_BUDGET_S=${CORPUS2_BUDGET_S:-420}) is spent"
        continue
    fi
    if [ -n "$(field skip "$exp")" ]; then
        echo "-- $(printf '%-30s' "$c") not run: $(field skip "$exp" | cut -c1-100)"
        continue
    fi
    mkdir -p "$C2/$c"
    needs=$(field needs "$exp")
    if [ -n "$needs" ] && ! $PY -c 'import importlib.util as u, sys
sys.exit(0 if all(u.find_spec(m) for m in sys.argv[1:]) else 1)' $needs 2>/dev/null; then
        echo "CORPUS2-SKIP: one of $needs is not installed here" > "$C2/$c.out"
        echo "-- $(printf '%-30s' "$c") not run: one of $needs is not installed here"
        continue
    fi
    cmd=()
    if [ -f "$d/case.cu" ] || [ -f "$d/case.c" ]; then
        bin=$C2/bin/$c
        # shellcheck disable=SC2046 # build flags are words
        if [ -f "$d/case.cu" ]; then
            "$NVCC" $(field build "$exp") -o "$bin" "$d/case.cu" > "$C2/$c.build" 2>&1
        else
            "$CC" -std=c11 -O2 $(field build "$exp") -o "$bin" "$d/case.c" -ldl > "$C2/$c.build" 2>&1
        fi || {
            echo "CORPUS2-SKIP: the program did not build: $(grep -m1 -i error "$C2/$c.build" | cut -c1-200)" > "$C2/$c.out"
            echo "-- $(printf '%-30s' "$c") did not build"
            continue
        }
        cmd=("$bin")
    else
        run=$(field run "$exp")
        [ -n "$run" ] || run='{case}'
        read -ra args <<< "$run"
        cmd=("$PY")
        for a in "${args[@]}"; do cmd+=("${a//\{case\}/$d/case.py}"); done
    fi
    t=$(field timeout "$exp")
    read -ra envs <<< "$(field env "$exp")"
    t0=$(date +%s.%N)
    (cd "$C2" && env ${envs[@]+"${envs[@]}"} timeout -k 10 "${t:-60}" "$CG" run --dir "$C2/$c" -- "${cmd[@]}" \
        > "$C2/$c.out" 2> "$C2/$c.err" < /dev/null)
    echo $? > "$C2/$c.rc"
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' > "$C2/$c.secs"
    "$CG" report --json "$C2/$c" > "$C2/$c.json" 2>/dev/null
    echo $? > "$C2/$c.report_rc"
    last=$(sed '/^convguard report/,$d' "$C2/$c.err" | grep -v '^convguard' | grep -v '^\s*$' | tail -1 | cut -c1-110)
    grep -q '^CORPUS2-SKIP:' "$C2/$c.out" && last=$(grep -m1 '^CORPUS2-SKIP:' "$C2/$c.out" | cut -c1-110)
    printf -- '-- %-30s exit %-3s %5ss  %s\n' "$c" "$(cat "$C2/$c.rc")" "$(cat "$C2/$c.secs")" "$last"
done
