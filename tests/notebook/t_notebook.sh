#!/usr/bin/env bash
# t_notebook.sh - the notebook half of convguard with real Jupyter components
# from PyPI (ipykernel, jupyter_client, nbconvert, papermill): `convguard kernel
# install/uninstall`, a kernel started from that spec by jupyter_client (as
# Jupyter starts it) in which a cell loads the real libcudnn.so.9 and calls
# cudnnCreate, `%load_ext convguard` + `%convguard` there and in a kernel
# without the shim, an executed notebook converted to HTML and opened in
# headless Chromium (a screenshot), and `convguard run -- jupyter nbconvert`
# / papermill tracing the kernel the notebook ran in.
# Usage: VENV=/path/venv tests/notebook/t_notebook.sh  (make test-notebook)
#   the venv holds those packages and convguard (the wheel; or PYTHONPATH=python
#   and CONVGUARD_BIN=build/convguard for the source tree's package)
#   SHOT=FILE keeps the screenshot (default build/notebook/notebook.png)
source "$(dirname "$0")/../lib.sh"
VENV=${VENV:?VENV=/path/to/venv}
PY=$VENV/bin/python
CG=("$PY" -m convguard)
REAL=${CG_REAL_CUDA_LIB:-/usr/local/cuda/lib}
[ -e "$REAL/libcudnn.so.9" ] || skip_all "no real cuDNN 9 in $REAL"
SHOT=${SHOT:-$ROOT/build/notebook/notebook.png}
P=$WORK/prefix
export JUPYTER_PATH=$P/share/jupyter JUPYTER_RUNTIME_DIR=$WORK/runtime JUPYTER_CONFIG_DIR=$WORK/config
export JUPYTER_PLATFORM_DIRS=1 PYDEVD_DISABLE_FILE_VALIDATION=1 CONVGUARD_QUIET=1
mkdir -p "$WORK/nb" "$WORK/nb_fb" "$WORK/plain"
KS=$ROOT/tests/notebook/kernel_session.py
CELL_CUDNN="import ctypes, os
lib = ctypes.CDLL('$REAL/libcudnn.so.9')
h = ctypes.c_void_p()
print('cudnnCreate returned', lib.cudnnCreate(ctypes.byref(h)))
print('LD_PRELOAD=' + os.environ.get('LD_PRELOAD', ''))
print('FALLBACK=' + os.environ.get('CONVGUARD_FALLBACK', 'unset'))"

# 1. install: the spec, and Jupyter sees it
"${CG[@]}" kernel install --prefix "$P" --name cg-test >"$WORK/i1" 2>&1
check "kernel install --prefix: exit 0, names where" grep -q "Installed kernelspec cg-test in $P/share/jupyter/kernels/cg-test" "$WORK/i1"
K=$P/share/jupyter/kernels/cg-test/kernel.json
check "the spec starts this Python's kernel through convguard._launch" \
    jq -e --arg py "$PY" '.argv[0] == $py and .argv[1:4] == ["-m", "convguard._launch", "-f"] and .argv[4] == "{connection_file}"' "$K"
check "the spec sets no LD_PRELOAD (appended at launch), no FALLBACK, no DIR" \
    jq -e '(.env | has("LD_PRELOAD") or has("CONVGUARD_FALLBACK") or has("CONVGUARD_DIR")) | not' "$K"
check "the spec's display name" jq -e '.display_name | test("^Python 3 \\(convguard\\)$")' "$K"
check "jupyter kernelspec list shows it" bash -c "'$VENV/bin/jupyter' kernelspec list | grep -q 'cg-test .*$P/share/jupyter/kernels/cg-test'"
"${CG[@]}" kernel install --prefix "$P" --name cg-fb --display-name "GPU (traced, fallback)" --fallback \
    --dir "$WORK/traces_fb" >/dev/null 2>&1
K2=$P/share/jupyter/kernels/cg-fb/kernel.json
check "--fallback --dir --display-name: FALLBACK=1, DIR absolute, the name" \
    jq -e --arg d "$WORK/traces_fb" '.env.CONVGUARD_FALLBACK == "1" and .env.CONVGUARD_DIR == $d and .display_name == "GPU (traced, fallback)"' "$K2"

# 2. the kernel, started by jupyter_client from the spec, with an LD_PRELOAD already set
PRE=$(ls /lib/x86_64-linux-gnu/libm.so.6 /lib64/libm.so.6 /usr/lib/*/libm.so.6 2>/dev/null | head -1)
LD_PRELOAD=$PRE "$PY" "$KS" cg-test "$WORK/nb" "$WORK/k1.json" "$CELL_CUDNN" "%load_ext convguard" "%convguard" 2>"$WORK/k1.err"
check "kernel: the cells ran (cudnnCreate returned 1001: no driver here)" jq -e '.[0].text | contains("cudnnCreate returned 1001")' "$WORK/k1.json"
check "kernel: LD_PRELOAD kept what was set, the shim appended" \
    jq -e --arg pre "$PRE" '.[0].text | test("LD_PRELOAD=" + $pre + " [^\\n]*/libconvguard.so\\n")' "$WORK/k1.json"
check "kernel: no fallback unless asked" jq -e '.[0].text | contains("FALLBACK=unset")' "$WORK/k1.json"
TR=$(ls "$WORK"/nb/convguard-logs/*.jsonl 2>/dev/null)
check "kernel: one trace in the notebook folder's ./convguard-logs" test "$(echo "$TR" | grep -c .)" = 1
check "kernel: the trace holds the real cudnnCreate failure" jqt "$TR" 'any(.[]; .ev == "cudnn_handle" and .status_name == "CUDNN_STATUS_NOT_INITIALIZED")'
check "%load_ext convguard in a traced kernel: quiet" jq -e '.[1].error == null and .[1].text == ""' "$WORK/k1.json"
check "%convguard names the trace file" jq -e --arg t "$TR" '.[2].text | contains($t)' "$WORK/k1.json"
check "%convguard names cuDNN 9.19.0" jq -e '.[2].text | test("libcudnn.so.9 +9\\.19\\.0")' "$WORK/k1.json"
check "%convguard names the failure" jq -e '.[2].text | contains("cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED")' "$WORK/k1.json"
check "%convguard names the cause from the report's rule" jq -e '.[2].text | contains("no NVIDIA driver")' "$WORK/k1.json"
check "%convguard renders HTML in Jupyter (an iframe holding the failure)" \
    jq -e '(.[2].html | startswith("<iframe")) and (.[2].html | contains("CUDNN_STATUS_NOT_INITIALIZED"))' "$WORK/k1.json"

# 3. --fallback --dir: the traces go to DIR, FALLBACK=1 inside
"$PY" "$KS" cg-fb "$WORK/nb_fb" "$WORK/k2.json" "$CELL_CUDNN" 2>/dev/null
check "--fallback kernel: CONVGUARD_FALLBACK=1 inside" jq -e '.[0].text | contains("FALLBACK=1")' "$WORK/k2.json"
check "--dir kernel: the trace in DIR, none beside the notebook" \
    bash -c "ls '$WORK'/traces_fb/*.jsonl && test ! -e '$WORK/nb_fb/convguard-logs'"

# 4. a kernel without the shim (the venv's own python3 kernel): the note once, with the command
JUPYTER_PATH=$VENV/share/jupyter "$PY" "$KS" python3 "$WORK/plain" "$WORK/k3.json" "$CELL_CUDNN" "%load_ext convguard" "%convguard" "%convguard" 2>/dev/null
check "no shim: %load_ext says the kernel runs without it, with the install command" \
    jq -e '.[1].text | contains("without libconvguard.so preloaded") and contains("convguard kernel install --user")' "$WORK/k3.json"
check "no shim: said once (not again by %convguard)" jq -e '[.[].text | select(contains("without libconvguard.so preloaded"))] | length == 1' "$WORK/k3.json"
check "no shim: %convguard still names cuDNN 9.19.0 mapped, and no trace" \
    jq -e '.[2].text | test("libcudnn.so.9 +9\\.19\\.0") and contains("no trace: convguard is not preloaded here")' "$WORK/k3.json"

# 5. an executed notebook as HTML, in headless Chromium
cat >"$WORK/mk.py" <<PYEOF
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(c) for c in ["""$CELL_CUDNN""", "%load_ext convguard", "%convguard"]]
nb.metadata["kernelspec"] = {"name": sys.argv[2], "display_name": sys.argv[2], "language": "python"}
nbformat.write(nb, sys.argv[1])
PYEOF
"$PY" "$WORK/mk.py" "$WORK/nb/nb.ipynb" cg-test
(cd "$WORK/nb" && "$VENV/bin/jupyter" nbconvert --to html --template basic --execute nb.ipynb >/dev/null 2>&1)
check "nbconvert --execute --to html: the page holds %convguard's output" grep -q "convguard check: pid" "$WORK/nb/nb.html"
{ echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>notebook</title><style>body{font-family:sans-serif;margin:16px}'
  echo 'pre{background:#f7f7f7;padding:6px}.prompt{color:#303f9f;font-size:12px}</style></head><body>'
  cat "$WORK/nb/nb.html"; echo '</body></html>'; } >"$WORK/page.html"
check "the page loads nothing from outside (no src/href to a URL, no <link>, no <script src>)" \
    bash -c "! grep -Eq '(src|href)=\"(https?:)?//|<link |<script src|@import' '$WORK/page.html'"
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$CHROME" ]; then
    mkdir -p "$(dirname "$SHOT")"
    rm -f "$SHOT"
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$WORK/chrome" \
        --screenshot="$SHOT" --window-size=1100,1500 "file://$WORK/page.html" >/dev/null 2>&1
    check "headless Chromium: a screenshot ($SHOT)" test -s "$SHOT"
    # the iframe ran its script and was sized to its page (a dump of the DOM after load)
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/chrome" --virtual-time-budget=3000 \
        --dump-dom "file://$WORK/page.html" >"$WORK/dom.html" 2>/dev/null
    check "headless Chromium: the iframe was sized to its page (taller than the default)" \
        bash -c "grep -o 'style=\"width: 100%[^\"]*\"' '$WORK/dom.html' | grep -Eq 'height: *([7-9][0-9][0-9]|[0-9]{4,})px'"
else
    echo "  (no chromium: the screenshot not taken)"
fi

# 6. convguard run -- jupyter nbconvert / papermill: the kernel the notebook ran in is traced and named
"$PY" "$WORK/mk.py" "$WORK/plain/nb2.ipynb" python3
(cd "$WORK/plain" && rm -rf convguard-logs && PATH=$VENV/bin:$PATH JUPYTER_PATH=$VENV/share/jupyter \
    "$PY" -m convguard run -- jupyter nbconvert --execute --to notebook --output nb2_out nb2.ipynb >"$WORK/r1" 2>&1)
check "run -- jupyter nbconvert: the report names the kernel process and its failure" \
    bash -c "grep -q 'pid [0-9]* (python[0-9.]* -m ipykernel_launcher' '$WORK/r1' && grep -q 'CUDNN_STATUS_NOT_INITIALIZED' '$WORK/r1'"
check "run -- jupyter nbconvert: the kernel's trace holds the cudnnCreate failure" \
    bash -c "jq -e -s 'any(.[]; .ev == \"start\" and (.argv | join(\" \") | test(\"ipykernel_launcher\"))) and any(.[]; .ev == \"cudnn_handle\")' \$(grep -l ipykernel_launcher '$WORK'/plain/convguard-logs/*.jsonl | head -1)"
if [ -x "$VENV/bin/papermill" ]; then
    (cd "$WORK/plain" && rm -rf convguard-logs && PATH=$VENV/bin:$PATH JUPYTER_PATH=$VENV/share/jupyter \
        "$PY" -m convguard run -- papermill -k python3 nb2.ipynb nb2_pm.ipynb >"$WORK/r2" 2>&1)
    check "run -- papermill: the report names the kernel process and its failure" \
        bash -c "grep -q 'pid [0-9]* (python[0-9.]* -m ipykernel_launcher' '$WORK/r2' && grep -q 'CUDNN_STATUS_NOT_INITIALIZED' '$WORK/r2'"
fi

# 7. uninstall, and what is refused
"${CG[@]}" kernel uninstall cg-test >"$WORK/u1" 2>&1
check "uninstall: exit 0, gone from jupyter kernelspec list" \
    bash -c "grep -q 'Removed kernelspec cg-test' '$WORK/u1' && ! '$VENV/bin/jupyter' kernelspec list | grep -q 'cg-test '"
JUPYTER_PATH=$VENV/share/jupyter "${CG[@]}" kernel uninstall python3 >"$WORK/u2" 2>&1; rc=$?
check "uninstall of a kernel convguard did not install: refused (exit 1), kept" \
    bash -c "[ $rc = 1 ] && grep -q 'was not installed by convguard' '$WORK/u2' && test -e '$VENV/share/jupyter/kernels/python3/kernel.json'"
"${CG[@]}" kernel uninstall no-such >"$WORK/u3" 2>&1; rc=$?
check "uninstall of an unknown name: exit 1, says so" bash -c "[ $rc = 1 ] && grep -q \"no kernel named 'no-such'\" '$WORK/u3'"
touch "$WORK/a-file"
"${CG[@]}" kernel install --prefix "$WORK/a-file/sub" >"$WORK/e1" 2>&1; rc=$?
check "unwritable prefix: exit 1, a clear message with the other choices" \
    bash -c "[ $rc = 1 ] && grep -q 'cannot write the kernel to' '$WORK/e1' && grep -q -- '--user' '$WORK/e1' && ! grep -q Traceback '$WORK/e1'"
"${CG[@]}" kernel install --prefix "$P" --name "bad/name" >"$WORK/e2" 2>&1; rc=$?
check "a kernel name with a slash: exit 2, says what a name is" bash -c "[ $rc = 2 ] && grep -q 'a kernel name is' '$WORK/e2'"
# a Python without ipykernel (a bare venv that sees this package through PYTHONPATH)
python3 -m venv --without-pip "$WORK/bare" 2>/dev/null
if [ -x "$WORK/bare/bin/python" ]; then
    CGPKG=$("$PY" -c 'import convguard, os; print(os.path.dirname(os.path.dirname(convguard.__file__)))')
    mkdir -p "$WORK/pkgcopy" && cp -r "$CGPKG/convguard" "$WORK/pkgcopy/"
    PYTHONPATH=$WORK/pkgcopy "$WORK/bare/bin/python" -m convguard kernel install --user >"$WORK/e3" 2>&1; rc=$?
    check "no ipykernel: exit 1, the pip command to get it" \
        bash -c "[ $rc = 1 ] && grep -q 'ipykernel is not installed in this Python' '$WORK/e3' && grep -q 'pip install ipykernel' '$WORK/e3'"
fi
finish
