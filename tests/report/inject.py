#!/usr/bin/env python3
"""inject.py - every string a trace can hold, given a payload of markup and
terminal controls (issue 26, items 3 and 4; docs/robustness.md "Output").

The event kinds are the ones the reader keeps (start, exit, lib and every kind
a RULE or FAILURE pattern of tools/rules/rules.def names); the fields are those
of every event in every trace under tests/report/, plus, for a kind no trace
there holds, the fields docs/trace-format.md gives it.  For each trace and each
string field in it (dotted path, `[]` for array items), the field gets the
payload appended; then:
  HTML  parsed by an HTML5 parser (html5lib; Python's html.parser when it is
        missing) holds only the elements and attributes that the pages of the
        unchanged traces hold, no script element, no on* attribute, no
        javascript: URL; and every page carries the Content-Security-Policy;
  text  the report printed holds no C0 control but its own newlines, no DEL, no
        C1 control (as UTF-8 or as a single byte), only valid UTF-8, and no line
        of its own forged by a value;
  JSON  (every field at once) is valid UTF-8 JSON and holds the payload whole.
usage: inject.py CONVGUARD ROOT WORK; prints one line per failure, then a count line.
"""
import hashlib
import json
import os
import re
import subprocess
import sys

CG, ROOT, WORK = sys.argv[1:4]
# what is after the last '/' comes last: a file's base name (the timeline's titles) keeps it whole
PAYLOAD = ('</title></text></svg><script>alert(1)</script> '
           '<img src=x onerror=alert(1)>"><svg onload=alert(1)>' "' onmouseover='alert(2)' "
           '<a href="javascript:alert(3)">x javascript:alert(4) &amp; '
           '\x1b[2J\x1b]0;owned\x07\x1b[31m\u009b31m\u0085\x7f\x08\r\n\tconvguard report: forged: no problem found')
# raw bytes that are not UTF-8 (0x9b: CSI as one byte), put in where this stands
RAW_MARK, RAW_BYTES = '\ue000', b'\x9b\xff\xc3'

try:
    import html5lib
    PARSER = 'html5lib'
except ImportError:
    html5lib = None
    PARSER = 'html.parser'
    from html.parser import HTMLParser

failures = []


def fail(msg):
    failures.append(msg)
    print('  FAIL t_report_escape: ' + msg)


# ---- the kinds the reader keeps, and the fields of each
def known_kinds():
    src = ('#define RULE(id, layer, sev, groups, pattern, ...) PATTERN pattern\n'
           '#define FAILURE(pattern, text) PATTERN pattern\n#include "tools/rules/rules.def"\n')
    out = subprocess.run(['cc', '-E', '-P', '-x', 'c', '-'], input=src, capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    kinds = {'start', 'exit', 'lib'}
    for lits in re.findall(r'PATTERN((?:\s*"(?:[^"\\]|\\.)*")+)', out):
        pattern = ''.join(re.findall(r'"((?:[^"\\]|\\.)*)"', lits))
        for clause in re.split(r'[|&]', pattern):
            name = clause.lstrip('!').split(':')[0]
            if name:
                kinds.add(name)
    return kinds


def doc_fields(kind):
    """the field names docs/trace-format.md gives the kind (its section's table or text)"""
    doc = open(os.path.join(ROOT, 'docs/trace-format.md'), encoding='utf-8').read()
    m = re.search(r'^##+ `%s`.*?$(.*?)(?=^##)' % re.escape(kind), doc, re.M | re.S)
    text = m.group(1) if m else ''
    if not m:  # "`kind` — fields: `a`, `b` ..." inside a section of several kinds
        m = re.search(r'^`%s` [^\n]*(?:\n(?!\n)[^\n]*)*' % re.escape(kind), doc, re.M)
        text = m.group(0) if m else ''
    names = re.findall(r'^\| `([a-z_]+)`', text, re.M) or re.findall(r'`([a-z_]+)`', text)
    return [n for n in names if n not in (kind, 'ev', 'seq', 't', 'pid', 'tid')]


def traces():
    found = []
    for d, _, files in os.walk(os.path.join(ROOT, 'tests/report')):
        found += [os.path.join(d, f) for f in sorted(files) if f.endswith('.jsonl')]
    return sorted(found)


def read_events(path):
    evs = []
    for line in open(path, 'rb'):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict):
            evs.append(e)
    return evs


def string_paths(v, path=()):
    """the paths of v's strings (ev itself left out): ('candidates', '[]', 'dir')"""
    if isinstance(v, str):
        yield path
    elif isinstance(v, dict):
        for k, x in v.items():
            if path or k != 'ev':
                yield from string_paths(x, path + (k,))
    elif isinstance(v, list):
        for x in v:
            yield from string_paths(x, path + ('[]',))


def mutated(v, path, tail):
    """v with the strings at path (None: every string but ev) given tail"""
    if path is None:
        if isinstance(v, str):
            return v + tail
        if isinstance(v, dict):
            return {k: x if k == 'ev' else mutated(x, None, tail) for k, x in v.items()}
        if isinstance(v, list):
            return [mutated(x, None, tail) for x in v]
        return v
    if not path:
        return v + tail if isinstance(v, str) else v
    if path[0] == '[]' and isinstance(v, list):
        return [mutated(x, path[1:], tail) for x in v]
    if isinstance(v, dict) and path[0] in v:
        return dict(v, **{path[0]: mutated(v[path[0]], path[1:], tail)})
    return v


def write_trace(path, evs, raw=False):
    data = ''.join(json.dumps(e, ensure_ascii=False) + '\n' for e in evs).encode('utf-8')
    if raw:
        data = data.replace(RAW_MARK.encode('utf-8'), RAW_BYTES)
    with open(path, 'wb') as f:
        f.write(data)


def copy_capture(src_trace, dst_dir, tail):
    """the .stderr capture beside a trace, its kept lines given tail (the header's sizes kept true)"""
    cap = src_trace[:-len('.jsonl')] + '.stderr'
    if not os.path.exists(cap):
        return
    raw = open(cap, 'rb').read()
    head, _, body = raw.partition(b'\n')
    hdr = json.loads(head)
    out, pos = b'', 0
    for sec in hdr.get('sections', []):
        part = body[pos:pos + sec['bytes']]
        pos += sec['bytes']
        if tail:
            part = b''.join(l + tail.encode('utf-8') + b'\n' if l else b''
                            for l in part.split(b'\n')[:-1]) + part.split(b'\n')[-1]
        sec['bytes'] = len(part)
        out += part
    hdr['bytes'] = len(out)
    with open(os.path.join(dst_dir, os.path.basename(cap)), 'wb') as f:
        f.write(json.dumps(hdr).encode() + b'\n' + out)


# ---- the checks
class Elements:
    def __init__(self, page):
        self.tags, self.attrs = [], []
        if html5lib:
            tree = html5lib.parse(page, treebuilder='etree', namespaceHTMLElements=False)
            for el in tree.iter():
                if not isinstance(el.tag, str):
                    continue  # a comment
                tag = el.tag.split('}')[-1]
                self.tags.append(tag)
                self.attrs += [(tag, k.split('}')[-1], v) for k, v in el.attrib.items()]
        else:
            me = self

            class P(HTMLParser):
                def handle_starttag(self, tag, attrs):
                    me.tags.append(tag)
                    me.attrs += [(tag, k, v or '') for k, v in attrs]
            P().feed(page.decode('utf-8', 'replace'))


def check_page(page, what, ours):
    els = Elements(page)
    bad = [t for t in els.tags if t not in ours['tags'] or t in ('script', 'iframe', 'object', 'embed', 'img', 'a')]
    if bad:
        fail('%s: the page has elements that are not the report\'s: <%s>' % (what, '> <'.join(sorted(set(bad)))))
    bad = ['%s %s="%s"' % (t, k, v[:30]) for t, k, v in els.attrs
           if k.lower().startswith('on') or (t, k) not in ours['attrs'] or 'javascript:' in v.lower()]
    if bad:
        fail('%s: the page has attributes that are not the report\'s: %s' % (what, '; '.join(sorted(set(bad)))))
    csp = [v for tag, k, v in els.attrs if tag == 'meta' and k == 'content' and "default-src 'none'" in v]
    if not csp or 'script' in csp[0]:
        fail("%s: no Content-Security-Policy default-src 'none' (allowing no script) in the page" % what)


BAD_TEXT = re.compile('[\x00-\x09\x0b-\x1f\x7f\x80-\x9f]')


def check_text(out, what):
    try:
        text = out.decode('utf-8')
    except UnicodeDecodeError as e:
        return fail('%s: the text report is not UTF-8 (%s)' % (what, e))
    m = BAD_TEXT.search(text)
    if m:
        return fail('%s: the text report holds a raw control U+%04X: ...%r' % (what, ord(m.group()),
                                                                              text[max(0, m.start() - 30):m.end()]))
    if any(l.startswith('convguard report: forged') for l in text.split('\n')):
        fail('%s: a value forged a line of the text report' % what)


def check_json(out, what):
    try:
        doc = json.loads(out.decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as e:
        return fail('%s: --json is not valid UTF-8 JSON (%s)' % (what, e))
    if None in doc.get('processes', [None]):
        return fail('%s: --json lost a process (null)' % what)
    if not any(PAYLOAD in s for s in strings(doc)):
        fail('%s: --json does not hold the payload whole' % what)


def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)


def report(trace, page, *flags):
    r = subprocess.run([CG, 'report', *flags, '--html', page, trace], capture_output=True)
    return r.stdout + r.stderr


def main():
    kinds = known_kinds()
    samples = {}
    for t in traces():
        samples[t] = read_events(t)
    seen = {e.get('ev') for evs in samples.values() for e in evs}
    # a kind the reader keeps that no trace here holds: its documented fields, in a trace of its own
    # output and output_capture are what the report reads from a .stderr capture (tools/model/capture.c):
    # the captures beside the traces here, their lines given the payload, stand for them
    captures = [t for t in samples if os.path.exists(t[:-len('.jsonl')] + '.stderr')]
    if captures:
        seen |= {'output', 'output_capture'}
    synth = sorted(kinds - seen)
    base = os.path.join(ROOT, 'tests/report/traces/load_cudnn_failed.jsonl')
    for k in synth:
        evs = [dict(e) for e in read_events(base)]
        fields = doc_fields(k)
        if not fields:
            fail('kind %s: no trace holds it and docs/trace-format.md gives it no fields' % k)
        evs.insert(-1, dict({'ev': k, 'seq': len(evs), 't': 0.5, 'pid': evs[0]['pid'], 'tid': evs[0]['pid']},
                            **{f: 'x' for f in fields}))
        samples['synthetic:' + k] = evs
    os.makedirs(os.path.join(WORK, 'v'), exist_ok=True)
    # the report's own elements: the union over the pages of the traces as they are
    ours = {'tags': set(), 'attrs': set()}
    baseline = {}
    for name, evs in samples.items():
        d = os.path.join(WORK, 'v', 'base')
        os.makedirs(d, exist_ok=True)
        t = os.path.join(d, os.path.basename(name.replace('synthetic:', 'synthetic-')) + ('' if name.endswith('.jsonl') else '.jsonl'))
        write_trace(t, evs)
        if not name.startswith('synthetic:'):
            copy_capture(name, d, '')
        page = os.path.join(WORK, 'base.html')
        report(t, page)
        baseline[name] = open(page, 'rb').read()
        els = Elements(baseline[name])
        ours['tags'] |= set(els.tags)
        ours['attrs'] |= {(tag, k) for tag, k, _ in els.attrs}
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
    for tag in ('script', 'img', 'a', 'iframe'):
        if tag in ours['tags']:
            fail('the report\'s own page has <%s>' % tag)
    runs = parsed = 0
    pages = set()
    fields = set()
    for name, evs in samples.items():
        paths = sorted({(e.get('ev'), p) for e in evs for p in string_paths(e)})
        fields |= set(paths)
        jobs = [(None, None)] + paths
        for n, (ev, path) in enumerate(jobs):
            d = os.path.join(WORK, 'v', str(n))
            os.makedirs(d, exist_ok=True)
            t = os.path.join(d, os.path.basename(name.replace('synthetic:', 'synthetic-')) + ('' if name.endswith('.jsonl') else '.jsonl'))
            tail = PAYLOAD + (RAW_MARK if path is None else '')
            new = [mutated(e, path, tail) if path is None or e.get('ev') == ev else e for e in evs]
            write_trace(t, new, raw=path is None)
            if not name.startswith('synthetic:'):
                copy_capture(name, d, PAYLOAD if path is None else '')
            page = os.path.join(WORK, 'page.html')
            what = '%s %s' % (os.path.relpath(name, ROOT) if '/' in name else name,
                              'every field' if path is None else '%s.%s' % (ev, '.'.join(path).replace('.[]', '[]')))
            out = report(t, page, *(('-v', '--all') if path is None else ()))
            runs += 1
            check_text(out, what)
            html = open(page, 'rb').read()
            h = hashlib.sha1(html).digest()
            if h not in pages:
                pages.add(h)
                parsed += 1
                check_page(html, what, ours)
            if path is None:
                r = subprocess.run([CG, 'report', '--json', t], capture_output=True)
                check_json(r.stdout, what)
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            if len(failures) > 20:
                print('  (stopping after 20 failures)')
                return
    print('  %d event kinds the reader keeps (%d from docs only: %s), %d string fields, %d reports, '
          '%d distinct pages parsed (%s)' % (len(kinds), len(synth), ' '.join(synth), len(fields), runs, parsed, PARSER))


main()
print('inject: %d failed' % len(failures))
sys.exit(1 if failures else 0)
