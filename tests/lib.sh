# tests/lib.sh - helpers for the shell tests.  Each test file sources this,
# calls `check` / `fail`, and ends with `finish`.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# CG_BUILD: another build tree (make check-sanitize uses build-san);
# CG_PRELOAD_FIRST: a library to preload before the shim (the ASan runtime).
BUILD_DIR=${CG_BUILD:-$ROOT/build}
SHIM_SO=$BUILD_DIR/libconvguard.so
SHIM=${CG_PRELOAD_FIRST:+$CG_PRELOAD_FIRST:}$SHIM_SO
CLIENTS=$BUILD_DIR/clients
DOUBLES=$BUILD_DIR/doubles
UNIT=$BUILD_DIR/unit
ROBUST=$BUILD_DIR/robust
TEST_NAME=$(basename "$0" .sh)
# the width the report's lines are wrapped at (util/term.c term_width): fixed, so that a test
# gives the same lines in any terminal; the width the tests' expected lines were written for.
# t_width.sh tests the others (80 when no terminal says, $COLUMNS, the terminal's).
export COLUMNS=100
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cg-$TEST_NAME.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
PASSED=0

pass() { PASSED=$((PASSED + 1)); echo "  ok   $TEST_NAME: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "  FAIL $TEST_NAME: $*"; }
# check "description" command...   (passes when the command succeeds)
check() { local d=$1; shift; if "$@" >/dev/null 2>&1; then pass "$d"; else fail "$d"; fi; }
finish() { echo "$TEST_NAME: $PASSED passed, $FAILED failed"; [ "$FAILED" -eq 0 ]; }
skip_all() { echo "$TEST_NAME: skipped ($*)"; exit 0; }
# nobody_reads FILE: the user 'nobody' can open FILE (a checkout under /root,
# mode 0700, keeps the shim from a process of another user)
nobody_reads() { ! command -v setpriv >/dev/null ||
    (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$1") 2>/dev/null; }

# run_shim DIR CMD... : runs CMD with the shim preloaded, traces into DIR
run_shim() { local d=$1; shift; mkdir -p "$d"; CONVGUARD_DIR=$d LD_PRELOAD=$SHIM "$@"; }
# the one trace file in DIR (fails when there is not exactly one)
trace_of() { local f; f=$(ls "$1"/*.jsonl 2>/dev/null); [ "$(echo "$f" | grep -c .)" = 1 ] && echo "$f"; }
# jqt FILE FILTER: true when the jq filter, applied to the slurped trace, yields true
jqt() { jq -e -s "$2" "$1" >/dev/null 2>&1; }
# trace_lines_valid FILE: every line is exactly one JSON object, read line by
# line (jq -s would take two objects glued on one line, or an empty line, as
# fine), and the file ends with a newline
trace_lines_valid() {
    [ -s "$1" ] && [ "$(tail -c1 "$1" | od -An -tx1 | tr -d ' ')" = 0a ] &&
        jq -R -n -e '[inputs | startswith("{") and endswith("}") and (try (fromjson | type == "object") catch false)]
                     | length > 0 and all' "$1" >/dev/null
}
# every line of every trace in DIR is one JSON object and seq has no gaps (lines
# of different threads may be written out of seq order: sorted, they are 0..n-1;
# the seqs of the events a `repeated` line counts are not lines: 0..n-1+counted,
# each once)
traces_valid() {
    local f
    for f in "$1"/*.jsonl; do
        trace_lines_valid "$f" || return 1
        jq -e -s 'length > 0 and ([.[].seq] | unique | length) == length and
                  ([.[].seq] | max) + 1 == length + ([.[] | select(.ev == "repeated") | .count] | add // 0)' \
            "$f" >/dev/null || return 1
    done
}
