# t_check.sh - convguard.check() in Python (python/convguard/_check.py), with the
# package as a source checkout holds it (PYTHONPATH=python, the command from
# build/): in a process that preloads the shim and called the real cuDNN 9.19
# cudnnCreate (CUDNN_STATUS_NOT_INITIALIZED here: no driver), in one without
# the shim, and in one with no CUDA library.  check() itself must load no CUDA
# library, leave no trace of its own children, and give the same rules'
# words as `convguard report` and `inspect` (no rule is in Python).
# Also `convguard kernel` of a make install finds the installed package.
source "$(dirname "$0")/../lib.sh"
PY=$(command -v python3) || skip_all "no python3"
REAL=${CG_REAL_CUDA_LIB:-/usr/local/cuda/lib}
[ -e "$REAL/libcudnn.so.9" ] || skip_all "no real cuDNN 9 in $REAL"
export PYTHONPATH=$ROOT/python CONVGUARD_BIN=$BUILD_DIR/convguard
cat >"$WORK/traced.py" <<PYEOF
import ctypes, json, os, sys
lib = ctypes.CDLL("$REAL/libcudnn.so.9")
h = ctypes.c_void_p()
rc = lib.cudnnCreate(ctypes.byref(h))
import convguard
import re
def cuda_files():
    return {l.split()[-1] for l in open("/proc/self/maps") if re.search(r"cuda|cudnn|nvidia|cublas|nvrtc|nccl", l)}
maps_before = cuda_files()
c = convguard.check()
maps_after = cuda_files()
again = convguard.check()  # the name stays the function (not shadowed by a submodule)
d = c.to_dict()
json.dump({"rc": rc, "text": str(c), "dict": d, "html": c._repr_html_(), "page": c.html(),
           "problems": c.problems, "preloaded": c.preloaded,
           "maps_same": maps_before == maps_after and len(maps_before) > 0,
           "again_same_trace": again.trace_path == c.trace_path}, open(sys.argv[1], "w"))
PYEOF
mkdir -p "$WORK/run1" && (cd "$WORK/run1" && CONVGUARD_QUIET=1 LD_PRELOAD=$SHIM "$PY" "$WORK/traced.py" "$WORK/o1.json")
check "traced: the script ran (cudnnCreate returned 1001, NOT_INITIALIZED)" jq -e '.rc == 1001' "$WORK/o1.json"
TR=$(ls "$WORK"/run1/convguard-logs/*.jsonl 2>/dev/null)
check "traced: exactly one trace in ./convguard-logs (check()'s own commands wrote none)" test "$(echo "$TR" | grep -c .)" = 1
check "traced: preloaded, the trace's path" jq -e --arg t "$TR" '.preloaded and .dict.trace_path == $t' "$WORK/o1.json"
check "traced: the text names the trace file" jq -e --arg t "$TR" '.text | contains($t)' "$WORK/o1.json"
check "traced: the text names cuDNN 9.19.0, mapped now" jq -e '.text | test("libcudnn.so.9 +9\\.19\\.0")' "$WORK/o1.json"
check "traced: the text names the failure (cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED)" \
    jq -e '.text | contains("cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED")' "$WORK/o1.json"
check "traced: a Python process with no framework keeps the frameworks' words (not 'no framework seen')" \
    jq -e '(.text | contains("you see: TensorFlow: ")) and (.text | contains("no framework seen") | not)' "$WORK/o1.json"
check "traced: the headline counts the trace's problem" jq -e '.problems >= 1 and (.text | startswith("convguard check: pid ")) and (.text | test("[0-9]+ problems?;"))' "$WORK/o1.json"
# the same words as convguard report on that trace: the rule's cause line comes from C
"$BUILD_DIR/convguard" report --json "$TR" >"$WORK/rep.json" 2>/dev/null
check "traced: to_dict()'s trace model is the report's (same rule ids)" \
    bash -c "jq -S '[.dict.trace.findings[].rule]' '$WORK/o1.json' >'$WORK/a'; jq -S '[.findings[].rule]' '$WORK/rep.json' >'$WORK/b'; test -s '$WORK/a' && cmp -s '$WORK/a' '$WORK/b' && grep -q '\"' '$WORK/a'"
check "traced: to_dict()'s inspect model lists the mapped cuDNN with version 91900" \
    jq -e '[.dict.inspect.libraries[] | select(.soname == "libcudnn.so.9") | .version] | index(91900) != null' "$WORK/o1.json"
check "traced: check() called twice: the second names the same trace" jq -e '.again_same_trace' "$WORK/o1.json"
check "traced: check() mapped no CUDA-family file in the process" jq -e '.maps_same' "$WORK/o1.json"
check "traced: HTML in an iframe, the page holds the failure and the trace's path" \
    jq -e --arg t "$TR" '(.html | startswith("<iframe")) and (.page | contains("CUDNN_STATUS_NOT_INITIALIZED")) and (.page | contains($t))' "$WORK/o1.json"
check "traced: the page loads nothing from outside (no src=/href= to http, no <link>, no <script src>)" \
    jq -e '.page | test("(src|href)=\"(https?:)?//|<link |<script src") | not' "$WORK/o1.json"

check "traced: the page is one view: each section once, no second Processes table" \
    jq -e '.page | ([match("<h2>[^<]*</h2>"; "g").string] | (length == (unique | length))) and (test("<h2>Processes") | not) and (test("<h2>This process now</h2>"))' "$WORK/o1.json"
check "traced: the page lists the trace's failure once, from report --json" \
    jq -e '.page | [match("<li>#[0-9]+ cudnnCreate -&gt; CUDNN_STATUS_NOT_INITIALIZED"; "g")] | length == 1' "$WORK/o1.json"
check "traced: the page runs no script (its policy forbids it)" \
    jq -e '.page | (test("<script"; "i") | not) and test("default-src .none.")' "$WORK/o1.json"

# 1b. a memory failure on the test doubles (another process holds 1020 MiB of 1 GiB; its name is markup):
# the page draws the GPU at the failure and now from the JSON models, every string escaped
D=$BUILD_DIR/doubles
if [ -e "$D/nvml/libnvidia-ml.so.1" ] && [ -e "$D/cudnn9/libcudnn.so.9" ]; then
    mkdir -p "$WORK/run3" "$WORK/evil"
    cp "$(command -v sleep)" "$WORK/evil/<svg onload=1>"
    "$WORK/evil/<svg onload=1>" 300 &
    HOLDER=$!
    cat >"$WORK/mem.py" <<PYEOF
import ctypes, json, sys
cudart = ctypes.CDLL("$D/cudart/libcudart.so.13")
cudart.cudaSetDevice(0)
p = ctypes.c_void_p()
cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(8 << 20))
h = ctypes.c_void_p()
ctypes.CDLL("$D/cudnn9/libcudnn.so.9").cudnnCreate(ctypes.byref(h))
import convguard
c = convguard.check()
open(sys.argv[1] + ".html", "w").write(c.html())
json.dump(c.to_dict(), open(sys.argv[1], "w"))
PYEOF
    (cd "$WORK/run3" && CONVGUARD_QUIET=1 LD_LIBRARY_PATH=$D/cudnn9:$D/cudart:$D/cuda:$D/nvml CGTEST_GPU_TOTAL_MB=1024 \
        CGTEST_GPU_HELD_MB=1020 CGTEST_HOLDER_PID=$HOLDER LD_PRELOAD=$SHIM "$PY" "$WORK/mem.py" "$WORK/o7.json")
    kill $HOLDER 2>/dev/null
    "$PY" - "$WORK/o7.json" >"$WORK/o7.out" 2>&1 <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
page = open(sys.argv[1] + ".html").read()
pics = d["trace"]["gpu_memory"]
assert len(pics) == 1 and pics[0]["parts"][0]["label"].startswith("pid "), pics
bars = re.findall(r'<svg xmlns="http://www.w3.org/2000/svg" class="membar".*?</svg>', page, re.S)
assert len(bars) == 2, "two bars: at the failure and now (%d)" % len(bars)
for bar, parts, span in ((bars[0], pics[0]["parts"], pics[0]["span"]), (bars[1], None, None)):
    segs = re.findall(r'<rect x="([0-9.]+)" y="4" width="([0-9.]+)" height="30" class="seg [a-z0-9]+" data-bytes="([0-9]+)"', bar)
    got = [int(b) for _, _, b in segs]
    if parts is not None:
        assert got == [max(p["bytes"] or 0, 0) for p in parts], (got, parts)
    for _, w, b in segs:
        assert abs(float(w) - 940 * int(b) / (span or sum(got))) < 0.02, (w, b)
assert "&lt;svg onload=1&gt;" in page and "<svg onload" not in page, "the holder's name escaped"
try:
    import html5lib
except ImportError:
    html5lib = None
if html5lib:
    doc = html5lib.parse(page, namespaceHTMLElements=False)
    for el in doc.iter():
        assert not str(el.tag).endswith("script"), "a script element"
        assert not any(k.startswith("on") for k in el.attrib), ("an on* attribute", el.tag, el.attrib)
print("ok", len(bars), "bars", "html5lib" if html5lib else "no html5lib")
PY
    check "memory failure: the page draws the GPU at the failure (the JSON's parts, in proportion) and now; names escaped ($(tail -1 "$WORK/o7.out"))" \
        grep -q '^ok' "$WORK/o7.out"
    check "memory failure: the holder by pid and name in the model (NVML's holders)" \
        jq -e '.trace.gpu_memory[0].parts[0] | .kind == "other_process" and (.label | contains("<svg onload=1>"))' "$WORK/o7.json"
    CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
    if [ -n "$CHROME" ]; then
        check "memory failure: Chromium's layout of the notebook view, no overlap, bars in proportion" \
            python3 "$ROOT/tests/report/layout_check.py" "$CHROME" "$WORK/o7.json.html" "$WORK"
        timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$WORK/chrome" \
            --window-size=1100,1900 --screenshot="$WORK/check.png" "file://$WORK/o7.json.html" >/dev/null 2>&1
        check "memory failure: Chromium renders the notebook view" test -s "$WORK/check.png"
        [ -n "${CHECK_SHOT:-}" ] && cp "$WORK/check.png" "$CHECK_SHOT"
    else
        echo "  skip t_check: no chromium: the notebook view's layout not checked"
    fi
else
    echo "  skip t_check: no test doubles (make doubles build/doubles/nvml/libnvidia-ml.so.1): memory view not checked"
fi

# 2. no shim: the snapshot alone, and the way to get a trace
mkdir -p "$WORK/run2" && (cd "$WORK/run2" && "$PY" "$WORK/traced.py" "$WORK/o2.json")
check "untraced: not preloaded, no trace, the text says so" \
    jq -e '(.preloaded | not) and .dict.trace == null and (.text | contains("no trace: convguard is not preloaded here"))' "$WORK/o2.json"
check "untraced: still names cuDNN 9.19.0 mapped" jq -e '.text | test("libcudnn.so.9 +9\\.19\\.0")' "$WORK/o2.json"
check "untraced: the page names the kernel install command" jq -e '.page | contains("convguard kernel install --user")' "$WORK/o2.json"
check "untraced: no convguard-logs made" test ! -e "$WORK/run2/convguard-logs"

# 3. no CUDA library at all (inspect's exit status 6 is a state, not an error)
"$PY" -c 'import convguard; c = convguard.check(); print(c); assert c.to_dict()["inspect"]["exit_status"] == 6' >"$WORK/o3" 2>&1
check "no CUDA: check() works, says no CUDA library is mapped" grep -q "has no CUDA library mapped" "$WORK/o3"
# 4. another pid, and a bad one
"$PY" -c 'import convguard, os; print(convguard.check(os.getppid()).pid == os.getppid())' >"$WORK/o4" 2>&1
check "check(pid) of another process" grep -qx True "$WORK/o4"
"$PY" -c 'import convguard; convguard.check(4194304)' >"$WORK/o5" 2>&1
check "check() of a pid that does not exist: an error naming inspect's status 4" grep -q "exit status 4" "$WORK/o5"
# 5. without the command: a clear message
env -u CONVGUARD_BIN PYTHONPATH="$WORK/pkgonly" bash -c "mkdir -p '$WORK/pkgonly' && cp -r '$ROOT/python/convguard' '$WORK/pkgonly/' && rm -rf '$WORK/pkgonly/convguard/_bin' && '$PY' -c 'import convguard; convguard.check()'" >"$WORK/o6" 2>&1
check "no command anywhere: FileNotFoundError that says how to get it (pip install . / make wheel)" \
    bash -c "grep -q 'pip install \\.' '$WORK/o6' && grep -q 'make wheel' '$WORK/o6' && ! grep -q 'pip install convguard' '$WORK/o6'"

# 6. make install: `convguard kernel` runs the installed package (here without ipykernel: its message)
I=$WORK/inst
# -o: install what is built, whichever tree (make test-portable's too), without rebuilding it (as t_install)
make -s -C "$ROOT" install NEEDS_CHECK=0 BUILD="$BUILD_DIR" DESTDIR="$I" PREFIX=/opt/cg \
    -o "$BUILD_DIR/convguard" -o "$BUILD_DIR/libconvguard.so" >/dev/null 2>&1
check "make install: the Python package in share/convguard/python" test -f "$I/opt/cg/share/convguard/python/convguard/_check.py"
env -u PYTHONPATH -u CONVGUARD_BIN "$I/opt/cg/bin/convguard" kernel install --user >"$WORK/k" 2>&1; rc=$?
if "$PY" -c 'import ipykernel' 2>/dev/null; then
    check "installed convguard kernel: ran the package (ipykernel here)" grep -q "kernelspec\|kernel" "$WORK/k"
else
    check "installed convguard kernel: the package ran and said ipykernel is missing (exit 1)" \
        bash -c "test $rc = 1 && grep -q 'ipykernel is not installed' '$WORK/k'"
fi
finish
