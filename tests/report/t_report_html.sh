# t_report_html.sh - `report --html`: one self-contained page with an SVG
# timeline; rendered by headless Chromium when it is installed.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
TR=$ROOT/tests/report/traces/lookup_workspace.jsonl
H=$WORK/report.html

"$CG" report --html "$H" "$TR" >/dev/null
check "exit 1 and the page is written" test $? = 1 -a -s "$H"
check "self-contained: no external src/href/url()" bash -c "! grep -qiE '(src|href)=|url\(|<script|<link' '$H'"
check "an inline SVG timeline" grep -q "<svg " "$H"
check "free memory line, workspace bars, failure marks" bash -c "grep -q 'class=\"free\"' '$H' && grep -q 'class=\"ws\"' '$H' && grep -q 'class=\"fail\"' '$H'"
check "the failure and its cause are on the page" grep -q "all_algos_exceed_free_memory" "$H"
check "HTML-escaped text (no raw < from traces)" bash -c "! grep -q '<64' '$H'"
"$CG" report --html "$WORK/healthy.html" "$ROOT/tests/report/healthy/single.jsonl" >/dev/null
check "healthy: exit 0, the page says no problem found" grep -q "no problem found" "$WORK/healthy.html"
"$CG" report --html /nonexistent/dir/x.html "$TR" >/dev/null 2>&1
check "an unwritable --html path: exit 2" test $? = 2

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
    echo "  skip t_report_html: no chromium (apt-get install chromium) - rendering not checked"
    finish
    exit $?
fi
flags="--headless --no-sandbox --disable-gpu --user-data-dir=$WORK/chrome --no-first-run"
timeout 60 "$CHROME" $flags --window-size=1100,1400 --screenshot="$WORK/shot.png" "file://$H" >/dev/null 2>&1
check "chromium renders a screenshot" test -s "$WORK/shot.png"
# a tiny PNG decoder (zlib only): count the pixels that are not near white
nonwhite=$(python3 - "$WORK/shot.png" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(d):
    n, typ = struct.unpack(">I4s", d[pos:pos + 8]); body = d[pos + 8:pos + 8 + n]; pos += 12 + n
    if typ == b"IHDR": w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif typ == b"IDAT": idat += body
bpp = {2: 3, 6: 4}[ctype]
raw, stride, prev, count = zlib.decompress(idat), w * bpp, bytearray(w * bpp), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    count += sum(1 for x in range(0, stride, bpp) if min(line[x:x + 3]) < 200)
    prev = line
print(count)
PY
)
check "the screenshot is not blank ($nonwhite dark pixels)" test "${nonwhite:-0}" -gt 5000
timeout 60 "$CHROME" $flags --dump-dom "file://$H" >"$WORK/dom.html" 2>/dev/null
check "the rendered page shows the failure" grep -q "all_algos_exceed_free_memory" "$WORK/dom.html"
check "the rendered page shows the cause" grep -q "needs a 1.5 GiB workspace" "$WORK/dom.html"
finish
