#!/usr/bin/env bash
# tests/run.sh - runs every test: unit programs, then the shell tests.
# Usage: tests/run.sh [name-pattern]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
pattern=${1:-}
failed=()
n=0
for t in "$ROOT"/tests/unit/*.sh "$ROOT"/tests/preload/*.sh "$ROOT"/tests/report/*.sh "$ROOT"/tests/arch/*.sh; do
    [ -e "$t" ] || continue
    case "$(basename "$t")" in *"$pattern"*) ;; *) continue ;; esac
    n=$((n + 1))
    if ! bash "$t"; then failed+=("$(basename "$t")"); fi
done
echo
if [ ${#failed[@]} -ne 0 ]; then
    echo "FAILED: ${failed[*]} (${#failed[@]} of $n test files)"
    exit 1
fi
echo "all $n test files passed"
