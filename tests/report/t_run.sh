# t_run.sh - `convguard run`: the shim is preloaded (before any LD_PRELOAD),
# settings travel as CONVGUARD_*, the program's exit status and signals come
# through, and the report shows only when something failed, from this run's traces.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
P=$UNIT/prog_basic
C=$BUILD_DIR/report/cuda_client
[ -x "$P" ] && [ -x "$C" ] || skip_all "test programs missing (make test builds them)"
# a stand-in libcudart.so.13: a run that loads a CUDA library and fails nowhere
mkdir -p "$WORK/fake"
cp "$(ldconfig -p | sed -n 's/.*libm\.so\.6 (libc6,x86-64[^)]*) => //p' | head -1)" "$WORK/fake/libcudart.so.13" # (older ldconfig adds ", OS ABI: …")

out=$("$CG" run --dir "$WORK/a" -- "$C" load "$WORK/fake" 2>"$WORK/err")
check "exit 0 and the program's output" test $? = 0 -a "$out" = loaded
check "a healthy run prints no report" bash -c "! grep -q '^convguard report' '$WORK/err'"
check "a healthy run says so in one line" grep -q "convguard: no problem found (traces in $WORK/a)" "$WORK/err"
T=$(trace_of "$WORK/a")
check "the trace is in --dir" test -n "$T"
check "LD_PRELOAD starts with the shim next to the binary" jqt "$T" ".[0].env.LD_PRELOAD == \"$SHIM\""

LD_PRELOAD=libm.so.6 "$CG" run --dir "$WORK/b" --fallback --workspace-limit 64 --reserve 32 -- "$C" load "$WORK/fake" >/dev/null 2>&1
T=$(trace_of "$WORK/b")
check "an existing LD_PRELOAD is kept, after the shim" jqt "$T" ".[0].env.LD_PRELOAD == \"$SHIM:libm.so.6\""
check "--fallback --workspace-limit --reserve reach the shim" jqt "$T" '.[0].settings == {"fallback":true,"workspace_limit_mb":64,"reserve_mb":32}'

"$CG" run --dir "$WORK/c" --quiet -- "$P" status 7 >/dev/null 2>"$WORK/err"
check "the program's exit status (7)" test $? = 7
"$CG" run --dir "$WORK/c2" -- bash -c 'kill -TERM $$' 2>/dev/null
check "killed by SIGTERM: 143" test $? = 143

"$CG" run --dir "$WORK/s" --quiet -- sleep 30 2>/dev/null &
cg=$!
sleep 0.5
kill -TERM $cg
wait $cg
check "SIGTERM to convguard reaches the program (exit 143, promptly)" test $? = 143

"$CG" run --dir "$WORK/g" -- "$P" echo x >/dev/null 2>"$WORK/err"
check "a program that never loads CUDA: convguard says the GPU was never used" grep -q "the GPU was never used" "$WORK/err"
check "... and leaves no trace file for it" test -z "$(ls "$WORK/g")"
"$CG" run --dir "$WORK/nf" -- bash -c 'no_such_command_for_convguard_test' >/dev/null 2>"$WORK/err"
check "a command that could not be started (exit 127) is said as such" \
    bash -c "grep -q 'exited with status 127: a command it ran could not be started' '$WORK/err'"
"$CG" run --dir "$WORK/e" -- "$P" errno >/dev/null 2>"$WORK/err"
check "a failure in the trace prints the report though the program exited 0" grep -q "^convguard report: " "$WORK/err"
check "... naming the library that did not load" grep -q "libcudnn_missing_for_test.so.9" "$WORK/err"

mkdir -p "$WORK/old"
cp "$ROOT/tests/report/traces/handle_no_driver.jsonl" "$WORK/old/"
"$CG" run --dir "$WORK/old" --quiet -- "$C" load "$WORK/fake" >/dev/null 2>"$WORK/err"
check "older traces in the same folder are not this run's: no report" test ! -s "$WORK/err"

"$CG" run --dir "$WORK/q" --quiet -- "$C" load "$WORK/fake" >/dev/null 2>"$WORK/err"
check "--quiet: nothing on stderr for a healthy run" test ! -s "$WORK/err"
"$CG" run --dir "$WORK/n" -- /nonexistent/prog 2>"$WORK/err"
check "a program that cannot start: 127 and why" bash -c "test $? = 127 && grep -q 'cannot run /nonexistent/prog' '$WORK/err'"
"$CG" run --workspace-limit lots -- true 2>/dev/null
check "a bad number: usage error 2" test $? = 2
"$CG" run 2>/dev/null
check "no command: usage error 2" test $? = 2

make -s -C "$ROOT" install PREFIX="$WORK/inst" >/dev/null 2>&1
"$WORK/inst/bin/convguard" run --dir "$WORK/i" --quiet -- "$C" load "$WORK/fake" >/dev/null 2>&1
T=$(trace_of "$WORK/i")
check "installed layout: bin/convguard finds lib/libconvguard.so" jqt "$T" ".[0].env.LD_PRELOAD == \"$WORK/inst/lib/libconvguard.so\""
finish
