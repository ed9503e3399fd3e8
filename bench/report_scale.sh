#!/usr/bin/env bash
# bench/report_scale.sh - `convguard report` on a job's worth of traces, one
# mix of events after the other, each beside a plain Python loop that only
# parses the same lines (json.loads): MB/s, CPU time and peak memory.
#
# The mixes (tests/report/gen_set.c writes each set, from one trace):
#   real      1000 ranks of a real H200 trace, unpadded: JAX under a leftover
#             process, its pool shrinking through 41 failed cuMemCreate
#             (tests/report/scale/jax_leftover.h200.jsonl, 109 KB)
#   distinct  the same ranks out of step (each t moved) and each GPU's own free
#             memory: no two ranks alike, none read as another's
#   failures  1000 ranks of 200 KB, the real trace padded with its own
#             alloc_failed lines: nearly every line a failure
#   plans     1000 ranks of 200 KB, a real JAX trace padded with its graph_plan
#             lines (tests/report/traces/own_pool_took_memory.jax_h200.jsonl),
#             lines no rule keeps: the easy mix
#   small     20,000 small processes (a 3 KB rank trace: tests/report/ranks/)
#   small100k 100,000 of them (MIXES=... to run it)
#
# Usage: bench/report_scale.sh            (MIXES="real distinct failures plans small")
#        MIXES="real small100k" bench/report_scale.sh
#        CG=/path/to/convguard compares another build (CG_OLD=... adds a second
#        column set: before and after); REPEAT= (best of, 3); JSON=1 adds --json
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
CG=${CG:-$ROOT/build/convguard}
CG_OLD=${CG_OLD:-}
GEN=$ROOT/build/report/gen_set
REPEAT=${REPEAT:-3}
MIXES=${MIXES:-real distinct failures plans small}
REAL=$ROOT/tests/report/scale/jax_leftover.h200.jsonl
PLANS=$ROOT/tests/report/traces/own_pool_took_memory.jax_h200.jsonl
SMALL=$ROOT/tests/report/ranks/node-a-r0-9000.jsonl
[ -x "$CG" ] || { echo "report_scale: build $CG first (make)"; exit 2; }
[ -x "$GEN" ] || make -s -C "$ROOT" build/report/gen_set >/dev/null || { echo "report_scale: cannot build $GEN"; exit 2; }
[ -x /usr/bin/time ] || { echo "report_scale: needs /usr/bin/time (Debian: apt-get install time)"; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cg-scale.XXXXXX")
trap 'rm -rf "$T"' EXIT
cat >"$T/loop.py" <<'PY'
import json, os, sys
for root, _, files in os.walk(sys.argv[1]):
    for name in sorted(files):
        with open(os.path.join(root, name), "rb") as f:
            for line in f:
                json.loads(line)
PY

# measure NAME CMD...: best wall time of REPEAT runs, with that run's CPU time
# (user + system) and peak RSS.  The machine may be shared: wall time is what
# the user waits, CPU time what it costs whatever else runs.  Sets SEC, CPU, PEAK.
measure() {
    local name=$1 best="" rss="" cpu="" i w m u y rc
    shift
    for ((i = 0; i < REPEAT; i++)); do
        /usr/bin/time -f "%e %M %U %S" -o "$T/time" "$@" >/dev/null 2>"$T/err"
        rc=$?
        [ "$rc" -le 1 ] || { echo "    $name: exit $rc: $(tail -2 "$T/err" | tr '\n' ' ')"; }
        read -r w m u y < <(tail -n 1 "$T/time")
        if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then best=$w rss=$m cpu=$(awk "BEGIN{print $u + $y}"); fi
    done
    SEC=$best CPU=$cpu PEAK=$(awk "BEGIN{printf \"%.1f\", $rss / 1024}")
    awk -v n="$name" -v w="$best" -v m="$PEAK" -v c="$cpu" -v mb="$MB" \
        'BEGIN{printf "    %-30s %7.2f s %8.1f MB/s %7.2f s CPU %8.1f MB/s of CPU %8.1f MB peak\n", n, w,
               (w > 0 ? mb / w : 0), c, (c > 0 ? mb / c : 0), m}'
}

make_set() { # MIX DIR
    case $1 in
    real) "$GEN" "$2" --template "$REAL" --procs 1000 --hosts 126 ;;
    distinct) "$GEN" "$2" --template "$REAL" --procs 1000 --hosts 126 --jitter 0.0137 --vary ;;
    failures) "$GEN" "$2" --template "$REAL" --procs 1000 --hosts 126 --size 200000 --pad alloc_failed ;;
    plans) "$GEN" "$2" --template "$PLANS" --procs 1000 --hosts 126 --size 200000 --pad graph_plan ;;
    small) "$GEN" "$2" --template "$SMALL" --procs 20000 --hosts 2500 ;;
    small100k) "$GEN" "$2" --template "$SMALL" --procs 100000 --hosts 12500 ;;
    *) echo "report_scale: no mix $1" >&2; return 2 ;;
    esac
}

echo "report_scale: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); $CG${CG_OLD:+ (before: $CG_OLD)}; best of $REPEAT"
SUMMARY=""
for mix in $MIXES; do
    rm -rf "$T/set"
    made=$(make_set "$mix" "$T/set") || continue
    MB=$(du -sb "$T/set" | awk '{printf "%.1f", $1 / 1e6}')
    echo "== $mix: $made ($MB MB)"
    cat "$T"/set/*.jsonl >/dev/null 2>&1 || find "$T/set" -type f -exec cat {} + >/dev/null # in the page cache for every reader alike
    measure "python json.loads loop" python3 "$T/loop.py" "$T/set"
    py_mbs=$(awk "BEGIN{printf \"%.0f\", $MB / $SEC}") py_cpu=$CPU py_peak=$PEAK
    if [ -n "$CG_OLD" ]; then
        measure "convguard report (before)" "$CG_OLD" report "$T/set"
        old_mbs=$(awk "BEGIN{printf \"%.0f\", $MB / $SEC}") old_cpu=$CPU old_peak=$PEAK
    fi
    measure "convguard report" "$CG" report "$T/set"
    cg_mbs=$(awk "BEGIN{printf \"%.0f\", $MB / $SEC}") cg_cpu=$CPU cg_peak=$PEAK
    measure "convguard report, 1 thread" env CONVGUARD_REPORT_THREADS=1 "$CG" report "$T/set"
    [ -z "${JSON:-}" ] || measure "convguard report --json" "$CG" report --json "$T/set"
    "$CG" report "$T/set" >"$T/text" 2>&1
    echo "    text report: $(wc -l <"$T/text") lines; its first: $(head -n 1 "$T/text" | cut -c1-100)"
    SUMMARY+=$(printf '%-10s %8s %9s %9s %8s %9s' "$mix" "$MB" "$py_mbs" "$py_cpu" "$py_peak" "$cg_mbs")
    [ -z "$CG_OLD" ] || SUMMARY+=$(printf ' %9s %9s %9s' "$old_mbs" "$old_cpu" "$old_peak")
    SUMMARY+=$(printf ' %9s %9s\n' "$cg_cpu" "$cg_peak")$'\n'
done
echo
echo "mix             MB  py MB/s   py CPU  py peak  cg MB/s$([ -z "$CG_OLD" ] || echo " old MB/s   old CPU  old peak")    cg CPU   cg peak"
printf '%s' "$SUMMARY"
