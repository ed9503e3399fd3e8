#!/usr/bin/env bash
# bench/report_scale.sh - `convguard report` on a 1000-rank job: MB/s and peak
# memory for the text report, --json and --html, beside a plain Python loop
# that only parses the same lines (json.loads) and jq reading them.
#
# The set is made from a real trace recorded on the H200 (JAX, its own pool
# took the GPU: tests/report/traces/own_pool_took_memory.jax_h200.jsonl), one
# file per rank with pid, host, rank and start time rewritten, padded to the
# size per file by repeating its graph_plan lines (tests/report/gen_ranks.py).
#
# Usage: bench/report_scale.sh [SIZE_PER_FILE...]   (default: 200000 = 200 MB in all;
#        2000000 gives the 2 GB set)
#        CG=/path/to/convguard compares another build; RANKS=, HOSTS=, REPEAT= (best of, 3);
#        NO_JQ=1 leaves jq out (it takes minutes on the 2 GB set)
set -u
cd "$(dirname "$0")/.."
CG=${CG:-$PWD/build/convguard}
RANKS=${RANKS:-1000}
HOSTS=${HOSTS:-126}
REPEAT=${REPEAT:-3}
[ -x "$CG" ] || { echo "report_scale: build $CG first (make)"; exit 2; }
[ -x /usr/bin/time ] || { echo "report_scale: needs /usr/bin/time (Debian: apt-get install time)"; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cg-scale.XXXXXX")
trap 'rm -rf "$T"' EXIT

# measure NAME CMD...: best wall time of REPEAT runs, the CPU time (user + system) and
# peak RSS of that run.  The machine may be shared: wall time is what the user waits,
# CPU time what it costs whatever else runs.
measure() {
    local name=$1 best="" rss="" cpu="" i w m u y
    shift
    for ((i = 0; i < REPEAT; i++)); do
        /usr/bin/time -f "%e %M %U %S" -o "$T/time" "$@" >/dev/null 2>"$T/err"
        read -r w m u y < <(tail -n 1 "$T/time")
        if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then best=$w rss=$m cpu=$(awk "BEGIN{print $u + $y}"); fi
    done
    awk -v n="$name" -v w="$best" -v m="$rss" -v c="$cpu" -v mb="$MB" \
        'BEGIN{printf "%-28s %8.2f s %9.1f MB/s %8.2f s CPU %9.1f MB peak\n", n, w, (w > 0 ? mb / w : 0), c, m / 1024}'
}

for size in ${*:-200000}; do
    need=$((RANKS * size / 1000000 * 2 + 100))
    avail=$(df -Pm "$T" | awk 'NR==2{print $4}')
    if [ "$avail" -lt "$need" ]; then
        echo "== $RANKS ranks x $size bytes: skipped, $avail MB free in $T, need $need"
        continue
    fi
    rm -rf "$T/set"
    python3 tests/report/gen_ranks.py "$T/set" --ranks "$RANKS" --hosts "$HOSTS" --size "$size" >"$T/gen"
    MB=$(du -sb "$T/set" | awk '{printf "%.1f", $1 / 1e6}')
    echo "== $(cat "$T/gen"): $RANKS ranks on $HOSTS hosts; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); $CG; best of $REPEAT"
    cat "$T"/set/*.jsonl >/dev/null # the page cache holds the set for every reader alike
    cat >"$T/loop.py" <<'PY'
import json, os, sys
d = sys.argv[1]
for root, _, files in os.walk(d):
    for name in sorted(files):
        with open(os.path.join(root, name), "rb") as f:
            for line in f:
                json.loads(line)
PY
    measure "python json.loads loop" python3 "$T/loop.py" "$T/set"
    command -v jq >/dev/null && [ -z "${NO_JQ:-}" ] && measure "jq -c . (all files)" bash -c "cat '$T'/set/*.jsonl | jq -c . >/dev/null"
    measure "convguard report" "$CG" report "$T/set"
    measure "convguard report, 1 thread" env CONVGUARD_REPORT_THREADS=1 "$CG" report "$T/set"
    measure "convguard report --json" "$CG" report --json "$T/set"
    measure "convguard report --html" "$CG" report --html "$T/report.html" "$T/set"
    "$CG" report "$T/set" >"$T/text" 2>&1
    echo "text report: $(wc -l <"$T/text") lines; html page: $(du -k "$T/report.html" | cut -f1) KB"
    head -n 30 "$T/text" | sed 's/^/    /'
done
