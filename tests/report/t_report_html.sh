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


# the GPU's memory at a memory failure: one bar of the whole GPU, its parts the JSON's (analysis/memory.c)
HM=$ROOT/tests/report/traces/handle_memory_held.jsonl
"$CG" report --html "$WORK/held.html" "$HM" >/dev/null 2>&1
"$CG" report --json "$HM" >"$WORK/held.json" 2>/dev/null
check "memory failure: a GPU memory section before the problems" \
    bash -c "grep -n 'GPU memory at the failure\|class=\"problem' '$WORK/held.html' | head -1 | grep -q 'GPU memory at the failure'"
check "memory failure: the JSON's gpu_memory has the holder by pid and name, this process and free" \
    jq -e '.gpu_memory[0] | ([.parts[].kind] | index("other_process") != null and index("free") != null and index("self") != null) and (.parts[0].label | test("^pid [0-9]+ \\("))' "$WORK/held.json"
# the bar's segments, as the page writes them: bytes in the JSON's order, widths in proportion to them
python3 - "$WORK/held.html" "$WORK/held.json" >"$WORK/segs.out" 2>&1 <<'PY'
import json, re, sys
page, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
bar = page[page.index('<svg xmlns="http://www.w3.org/2000/svg" class="membar"'):]
bar = bar[:bar.index('</svg>')]
segs = re.findall(r'<rect x="([0-9.]+)" y="4" width="([0-9.]+)" height="30" class="seg [a-z0-9]+" data-bytes="([0-9]+)"', bar)
pic = rep['gpu_memory'][0]
want = [max(p['bytes'] or 0, 0) for p in pic['parts']]
assert [int(b) for _, _, b in segs] == want, (segs, want)
for x, w, b in segs:
    assert abs(float(w) - 940 * int(b) / pic['span']) < 0.02, (w, b)
print('ok', len(segs))
PY
check "memory failure: the bar's segments are the JSON's parts, widths in proportion to bytes ($(tail -1 "$WORK/segs.out"))" grep -q '^ok' "$WORK/segs.out"
check "memory failure: a request whose size the trace lacks is said so in the legend, not drawn" \
    bash -c "grep -q 'asked: cudnnCreate (CUDNN_STATUS_INTERNAL_ERROR; how much it needed is not recorded)' '$WORK/held.html' && ! grep -q 'class=\"req\" data-bytes' '$WORK/held.html'"
check "memory failure: free memory too thin to see at the GPU's scale: the bar's end enlarged" grep -q "the bar&#39;s last\|the bar's last" "$WORK/held.html"
check "backticks of a fix are <code>, none shown" \
    bash -c "grep -q '<code>kill [0-9]*</code>' '$WORK/held.html' && ! grep -o '<dd>[^<]*' '$WORK/held.html' | grep -q '\`'"
check "the time axis has labelled ticks in one unit (not one '0.001 s')" \
    bash -c "test \$(grep -cE 'class=\"m small\" text-anchor=\"middle\">[0-9.]+ (µs|ms|s|min|h)<' '$WORK/held.html') -ge 4"
check "no GPU readings: the note sits in an empty plot, the failures are listed under it" \
    bash -c "'$CG' report --html '$WORK/nodrv.html' '$ROOT/tests/report/traces/handle_no_driver.jsonl' >/dev/null 2>&1; grep -q 'no GPU memory readings' '$WORK/nodrv.html' && grep -q 'class=\"m small ftext\">1  at ' '$WORK/nodrv.html'"
check "library ticks are named on the page, not only in tooltips" grep -q 'class="m small libt"' "$WORK/nodrv.html"
check "every page keeps its policy: no script, nothing loaded" \
    bash -c "for f in '$WORK'/*.html; do grep -q \"default-src 'none'\" \"\$f\" && ! grep -qiE '<script|(src|href)=' \"\$f\" || exit 1; done"

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
    echo "  skip t_report_html: no chromium (apt-get install chromium) - rendering not checked"
    finish
    exit $?
fi
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=$WORK/chrome --no-first-run"
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
# the pages as Chromium lays them out: no two texts of a figure overlap, none runs out of it, the
# bar's segments in proportion to their bytes (tests/report/layout_check.py)
layout() { python3 "$ROOT/tests/report/layout_check.py" "$CHROME" "$@" "$WORK" >"$WORK/layout.out" 2>&1; local rc=$?; cat "$WORK/layout.out" >&2; return $rc; }
"$CG" report --json "$ROOT/tests/report/traces/own_pool_took_memory.jax_h200.jsonl" >"$WORK/jax.json" 2>/dev/null
"$CG" report --html "$WORK/jax.html" "$ROOT/tests/report/traces/own_pool_took_memory.jax_h200.jsonl" >/dev/null 2>&1
for p in held:held.json jax:jax.json nodrv: report:; do
    f=${p%%:*} j=${p#*:}
    check "Chromium's layout of $f.html: no overlap, segments in proportion$([ -n "$j" ] && echo " to the JSON's bytes")" \
        layout "$WORK/$f.html" ${j:+--expect "$WORK/$j"}
done
# hostile names: a holder and a program named with markup, three times over: labels cut to fit, escaped
python3 - "$ROOT/tests/report/traces/handle_memory_held.jsonl" "$WORK/evil.jsonl" <<'PY'
import json, sys
P = '</title></text></svg><script>alert(1)</script> <img src=x onerror=alert(1)>"><svg onload=alert(1)>\x1b[2J' * 3
out = []
for l in open(sys.argv[1]):
    e = json.loads(l)
    for h in e.get('holders') or []:
        if h.get('name'):
            h['name'] += P
    if e['ev'] == 'start':
        e['argv'] = [a + P for a in e['argv']]
    out.append(json.dumps(e))
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
PY
"$CG" report --html "$WORK/evil.html" "$WORK/evil.jsonl" >/dev/null 2>&1
"$CG" report --json "$WORK/evil.jsonl" >"$WORK/evil.json" 2>/dev/null
check "hostile names: Chromium's layout, labels cut to fit, no overlap, the bar the JSON's" \
    layout "$WORK/evil.html" --expect "$WORK/evil.json"
check "hostile names: no element of theirs on the page" bash -c "! grep -qiE '<script|<img|<svg onload' '$WORK/evil.html' && grep -q '&lt;script&gt;alert' '$WORK/evil.html'"
# make demo's report (the doubles: another process holds 1020 MiB of 1 GiB)
if [ -x "$BUILD_DIR/clients/client_tflike" ] && [ -e "$BUILD_DIR/doubles/nvml/libnvidia-ml.so.1" ]; then
    CONVGUARD_DEMO_DOUBLES=1 TMPDIR=$WORK "$ROOT/examples/demo.sh" >"$WORK/demo.out" 2>&1
    DD=$(sed -n 's/^(traces kept in \([^;]*\);.*/\1/p' "$WORK/demo.out")
    "$CG" report --html "$WORK/demo.html" "$DD" >/dev/null 2>&1
    "$CG" report --json "$DD" >"$WORK/demo.json" 2>/dev/null
    check "make demo's page: the request that failed beside the bar (8 MiB asked, 2.0x the free)" \
        bash -c "grep -q 'class=\"req\" data-bytes=\"8388608\"' '$WORK/demo.html' && grep -q 'asked for 8 MiB: 2.0x the 4 MiB free' '$WORK/demo.html'"
    check "make demo's page: the holder 'sleep' drawn on the bar" grep -q 'class="seg mo0" data-bytes="1069547520"><title>pid [0-9]* (sleep) 1020 MiB' "$WORK/demo.html"
    check "make demo's page: Chromium's layout, no overlap, the bar is the JSON's" layout "$WORK/demo.html" --expect "$WORK/demo.json"
else
    echo "  skip t_report_html: make demo's page not checked (make doubles clients build/doubles/nvml first)"
fi
# a 1000-rank job (gen_ranks.py: one rank's memory failure, the others killed after it)
python3 "$ROOT/tests/report/gen_ranks.py" "$WORK/ranks" --ranks 1000 --hosts 125 --size 4000 --scenario cascade >/dev/null 2>&1
"$CG" report --html "$WORK/ranks.html" "$WORK/ranks" >/dev/null 2>&1
"$CG" report --json "$WORK/ranks" >"$WORK/ranks.json" 2>/dev/null
check "1000 ranks: one bar, of the rank that failed first (rank 37)" jq -e '(.gpu_memory | length) == 1 and (.gpu_memory[0].label | startswith("rank 37 "))' "$WORK/ranks.json"
check "1000 ranks: Chromium's layout of 16 lanes, no overlap" layout "$WORK/ranks.html" --expect "$WORK/ranks.json"
finish
