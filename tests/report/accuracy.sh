#!/usr/bin/env bash
# tests/report/accuracy.sh - `make accuracy`: convguard report on every case
# of tests/report/corpus/ (real-world failures, ../shared/real-world-failures.md
# rows, and failures recorded on the H200).  A case is right when the report's
# first finding is the expected rule and its cause, fix and "you see" contain
# the expected words.  Prints one line per case and "N/M right"; exit 1 when
# a case is wrong.
#
# A case is a folder: its trace files (*.jsonl, one per process) and `expect`:
#   row: 1                  the row of real-world-failures.md (or "-")
#   what: ...               one line
#   source: doubles | h200 | shaped   how the trace was made (see corpus/README.md)
#   rule: cudnn_shadowed    the expected first finding
#   cause: words | more words    each must be in the cause
#   fix: words | ...             each must be in the fix
#   symptom: words          "you see" must start with these
#   not: rule_a | rule_b    rules that must not be reported at all (noise)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CG=${CG:-$ROOT/build/convguard}
CORPUS=${1:-$ROOT/tests/report/corpus}
right=0 total=0
declare -a wrong_list=()

field() { sed -n "s/^$1: *//p" "$2" | head -1; }

for dir in "$CORPUS"/*/; do
    case=$(basename "$dir")
    exp=$dir/expect
    [ -f "$exp" ] || continue
    total=$((total + 1))
    want=$(field rule "$exp")
    row=$(field row "$exp")
    json=$("$CG" report --json "$dir" 2>/dev/null)
    got=$(jq -r '.findings[0].rule // "none"' <<<"$json")
    why=""
    if [ "$got" != "$want" ]; then
        why="first finding is $got"
    else
        for part in cause fix; do
            text=$(jq -r ".findings[0].$part" <<<"$json" | tr -s ' \n' '  ')
            IFS='|' read -ra words <<<"$(field "$part" "$exp")"
            for w in "${words[@]}"; do
                w=$(echo "$w" | sed 's/^ *//; s/ *$//')
                [ -n "$w" ] && ! grep -qF -- "$w" <<<"$text" && why="${why:+$why; }$part lacks '$w'"
            done
        done
        sym=$(field symptom "$exp")
        if [ -n "$sym" ]; then
            text=$(jq -r '.findings[0].symptom' <<<"$json")
            case "$text" in "$sym"*) ;; *) why="${why:+$why; }you-see does not start with '$sym'" ;; esac
        fi
        IFS='|' read -ra nots <<<"$(field not "$exp")"
        for n in "${nots[@]}"; do
            n=$(echo "$n" | tr -d ' ')
            [ -n "$n" ] && jq -e --arg r "$n" '[.findings[].rule] | index($r)' <<<"$json" >/dev/null &&
                why="${why:+$why; }also reports $n"
        done
    fi
    if [ -z "$why" ]; then
        right=$((right + 1))
        printf '%-4s %-32s expected %-28s got %-28s right\n' "$row" "$case" "$want" "$got"
    else
        wrong_list+=("$case")
        printf '%-4s %-32s expected %-28s got %-28s WRONG: %s\n' "$row" "$case" "$want" "$got" "$why"
    fi
done
echo "$right/$total right"
[ "$right" -eq "$total" ] && [ "$total" -gt 0 ]
