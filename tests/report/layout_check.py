#!/usr/bin/env python3
"""layout_check.py - a page of convguard's, laid out by headless Chromium, checked
by the boxes Chromium computed (not by our own estimate of them).

The page itself runs no script (its Content-Security-Policy forbids it): a copy
of it without that policy gets a script that measures, after layout, every
<text> of its SVG figures and every segment of the GPU memory bar, and writes
what it found into the page; `chromium --dump-dom` prints the page after the
script ran, and this reads it back.  Checked:
  - no two texts of one figure overlap (their boxes, 0.5 px allowed);
  - every text lies inside its figure;
  - the bar's segments (rect.seg with data-bytes, first row of each .membar)
    are in proportion to their bytes: width / bar width = bytes / span,
    within 0.2 px; with --expect FILE (a `report --json`), the bytes are the
    JSON's gpu_memory parts, in order, and there is one bar per picture.
usage: layout_check.py CHROMIUM PAGE.html WORKDIR [--expect REPORT.json] [--width 1100]
Prints one line per failure and a summary line; exit 1 on a failure, 2 when
Chromium gave nothing back.
"""
import argparse
import html
import json
import os
import re
import subprocess
import sys

MEASURE = r"""
<script>
window.addEventListener('load', function () {
  var out = {figures: [], bars: []};
  var svgs = document.querySelectorAll('svg');
  for (var i = 0; i < svgs.length; i++) {
    var svg = svgs[i], sb = svg.getBoundingClientRect(), texts = [];
    var ts = svg.querySelectorAll('text');
    for (var k = 0; k < ts.length; k++) {
      var b = ts[k].getBoundingClientRect();
      texts.push({t: ts[k].textContent.slice(0, 80), x0: b.left, y0: b.top, x1: b.right, y1: b.bottom});
    }
    out.figures.push({cls: svg.getAttribute('class'), x0: sb.left, y0: sb.top, x1: sb.right, y1: sb.bottom,
                      texts: texts});
    if ((svg.getAttribute('class') || '').indexOf('membar') >= 0) {
      var segs = [], rs = svg.querySelectorAll('rect.seg'), frame = svg.querySelector('rect.frame');
      var y0 = rs.length ? rs[0].getAttribute('y') : null;
      for (var k = 0; k < rs.length; k++) {
        if (rs[k].getAttribute('y') !== y0) break;  /* the first row: the whole GPU */
        segs.push({w: rs[k].getBBox().width, x: rs[k].getBBox().x, bytes: Number(rs[k].getAttribute('data-bytes'))});
      }
      out.bars.push({w: frame ? frame.getBBox().width : 0, segs: segs});
    }
  }
  var pre = document.createElement('pre');
  pre.id = 'layout-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def overlap(a, b, slack=0.5):
    return a['x0'] + slack < b['x1'] and b['x0'] + slack < a['x1'] and a['y0'] + slack < b['y1'] and b['y0'] + slack < a['y1']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('chromium')
    ap.add_argument('page')
    ap.add_argument('work')
    ap.add_argument('--expect')
    ap.add_argument('--width', type=int, default=1100)
    o = ap.parse_args()
    doc = open(o.page, encoding='utf-8').read()
    doc = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', '', doc, count=1)
    doc = doc.replace('</body>', MEASURE + '</body>', 1) if '</body>' in doc else doc + MEASURE
    probe = os.path.join(o.work, 'layout-' + os.path.basename(o.page))
    open(probe, 'w', encoding='utf-8').write(doc)
    cmd = [o.chromium, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--no-first-run',
           '--user-data-dir=' + os.path.join(o.work, 'chrome-layout'), '--window-size=%d,1400' % o.width,
           '--virtual-time-budget=5000', '--dump-dom', 'file://' + os.path.abspath(probe)]
    dom = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120).stdout.decode('utf-8', 'replace')
    m = re.search(r'<pre id="layout-check">(.*?)</pre>', dom, re.S)
    if not m:
        print('  FAIL layout: Chromium gave back no measurements (%d bytes of DOM)' % len(dom))
        return 2
    res = json.loads(html.unescape(m.group(1)))
    fails, ntexts, nsegs = [], 0, 0
    for f, fig in enumerate(res['figures']):
        ts = fig['texts']
        ntexts += len(ts)
        for i, a in enumerate(ts):
            if a['x0'] < fig['x0'] - 0.5 or a['x1'] > fig['x1'] + 0.5 or a['y0'] < fig['y0'] - 0.5 or a['y1'] > fig['y1'] + 0.5:
                fails.append('figure %d (%s): text %r runs out of it' % (f, fig['cls'], a['t']))
            for b in ts[i + 1:]:
                if overlap(a, b):
                    fails.append('figure %d (%s): texts overlap: %r and %r' % (f, fig['cls'], a['t'], b['t']))
    expect = json.load(open(o.expect))['gpu_memory'] if o.expect else None
    if expect is not None and len(expect) != len(res['bars']):
        fails.append('%d GPU memory pictures in the JSON, %d bars on the page' % (len(expect), len(res['bars'])))
    for k, bar in enumerate(res['bars']):
        segs = bar['segs']
        nsegs += len(segs)
        span = sum(s['bytes'] for s in segs)
        if expect is not None and k < len(expect):
            want = [p['bytes'] if p['bytes'] and p['bytes'] > 0 else 0 for p in expect[k]['parts']]
            if [s['bytes'] for s in segs] != want:
                fails.append('bar %d: segments of %s bytes, the JSON says %s' % (k, [s['bytes'] for s in segs], want))
            span = expect[k]['span']
        if not segs or bar['w'] <= 0 or span <= 0:
            fails.append('bar %d: no segments' % k)
            continue
        for s in segs:
            if abs(s['w'] - bar['w'] * s['bytes'] / span) > 0.2:
                fails.append('bar %d: a segment of %d bytes is %.2f px wide, not %.2f' % (k, s['bytes'], s['w'], bar['w'] * s['bytes'] / span))
        for a, b in zip(segs, segs[1:]):
            if abs(a['x'] + a['w'] - b['x']) > 0.05:
                fails.append('bar %d: a gap or overlap between segments at x=%.2f' % (k, b['x']))
    for line in fails[:20]:
        print('  FAIL layout %s: %s' % (os.path.basename(o.page), line))
    print('  layout %s: %d figures, %d texts, %d bars (%d segments): %d problems' % (
        os.path.basename(o.page), len(res['figures']), ntexts, len(res['bars']), nsegs, len(fails)))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
