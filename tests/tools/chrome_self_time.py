#!/usr/bin/env python3
"""Self time per scope name of a Chrome trace, computed from the raw events.

An independent check of capture_convert's Chrome importer: this script reads
the trace with Python's json module (no code shared with the C importer) and
applies the repair rules written in docs/CHROME-TRACE.md, then prints one
line per scope name, sorted by the name's UTF-8 bytes:

    NAME<TAB>SELF_NS

NAME escapes backslash, tab, newline and carriage return as \\\\ \\t \\n \\r;
events without a name are counted under the marker \\0unnamed (a single
backslash, which no escaped name can produce). SELF_NS is an integer: the
summed durations of the scopes with that name minus the durations of their
direct children, in nanoseconds.

tests/test_convert.c compares the importer against this script's output,
committed under fixtures/convert/corpus-self-time/. Regenerate with:

    python3 tests/tools/chrome_self_time.py TRACE > EXPECTED

Usage: chrome_self_time.py TRACE.json|TRACE.json.gz
       chrome_self_time.py --check CORPUS EXPECTED_DIR   (exit 77: skipped)
"""
import gzip
import json
import re
import sys
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

MAX_DEPTH = 1024          # CAP_MAX_DEPTH: deeper scopes are left out
NAME_MAX = 4096           # CAP_MAX_NAME_LEN: longer names are cut
NS_MAX = 1 << 62          # larger times are not numbers to the importer
NUMBER = re.compile(r'[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z')
UNNAMED = '\\0unnamed'


def load_events(path):
    """The event list: array form, object form, or an array cut short."""
    with open(path, 'rb') as f:
        raw = f.read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    text = raw.decode('utf-8')
    try:
        doc = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except ValueError:
        doc = partial_array(text)
    if isinstance(doc, dict):
        doc = doc.get('traceEvents')
    if not isinstance(doc, list):
        raise SystemExit('%s: no event array' % path)
    return [e for e in doc if isinstance(e, dict)]


def partial_array(text):
    """Every complete element of an array that was cut short."""
    dec = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal)
    i = len(text) - len(text.lstrip())
    if text[i:i + 1] != '[':
        raise SystemExit('not a cut-short array')
    i += 1
    out = []
    while True:
        while i < len(text) and text[i] in ' \t\r\n,':
            i += 1
        if i >= len(text) or text[i] == ']':
            return out
        try:
            value, i = dec.raw_decode(text, i)
        except ValueError:
            return out
        out.append(value)


def to_ns(value):
    """Microseconds (a number or a numeric string) -> integer ns, or None."""
    if isinstance(value, str):
        if not NUMBER.match(value):
            return None
        value = Decimal(value)
    if not isinstance(value, Decimal):
        return None
    with localcontext() as ctx:
        ctx.prec = 80
        try:
            ns = int((value * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        except InvalidOperation:
            return None
    return ns if abs(ns) <= NS_MAX else None


def clean_name(value):
    """A name as the importer keeps it, or None for no name."""
    if isinstance(value, Decimal):
        value = str(value)
    if not isinstance(value, str) or value == '':
        return None
    value = value.split('\0', 1)[0]
    b = value.encode('utf-8', 'surrogatepass')
    if len(b) > NAME_MAX:
        n = NAME_MAX
        while n > 0 and (b[n] & 0xc0) == 0x80:
            n -= 1
        value = b[:n].decode('utf-8', 'surrogatepass')
    return value


def thread_key(event):
    def canon(v):
        if isinstance(v, Decimal) or isinstance(v, str):
            s = str(v)
            if re.fullmatch(r'-?\d{1,18}', s):
                return str(int(s))
            return s
        return '0'
    return (canon(event.get('pid')), canon(event.get('tid')))


class Scope:
    __slots__ = ('start', 'end', 'seq', 'name', 'be', 'open_ord', 'close_ord')

    def __init__(self, start, end, seq, name, be):
        self.start, self.end, self.seq, self.name, self.be = \
            start, end, seq, name, be
        self.open_ord = self.close_ord = 0


def thread_scopes(recs):
    """recs: (ts, seq, ph, name, dur) of one thread -> nested scopes with
    their parent index, in the order the nesting visits them."""
    last = max(ts + (dur if ph == 'X' and dur is not None else 0)
               for ts, seq, ph, name, dur in recs)
    # 1. B/E by (ts, file order), matched with a stack
    be = sorted((r for r in recs if r[2] in 'BE'), key=lambda r: (r[0], r[1]))
    scopes, stack, ordinal = [], [], [0]

    def close(ts):
        s = stack.pop()
        s.end = ts
        s.close_ord = ordinal[0]
        ordinal[0] += 1

    def end_event(ts, name):
        if not stack:
            return                                   # unmatched: ignored
        if name is None or stack[-1].name == name:
            close(ts)
            return
        for k in range(len(stack) - 1, -1, -1):
            if stack[k].name == name:
                while len(stack) > k:                # closes those above too
                    close(ts)
                return
        # names no open scope: ignored

    i = 0
    while i < len(be):
        ts, seq, ph, name, _ = be[i]
        if ph == 'B':
            s = Scope(ts, ts, seq, name, True)
            s.open_ord = ordinal[0]
            ordinal[0] += 1
            scopes.append(s)
            stack.append(s)
            i += 1
            continue
        j = i
        while j < len(be) and be[j][2] == 'E' and be[j][0] == ts:
            j += 1
        run = [r[3] for r in be[i:j]]               # names of a same-ts run
        while run:
            pick = 0
            if stack:
                top = stack[-1].name
                named = [q for q, n in enumerate(run)
                         if top is not None and n == top]
                nameless = [q for q, n in enumerate(run) if n is None]
                pick = named[0] if named else nameless[0] if nameless else 0
            end_event(ts, run.pop(pick))
        i = j
    while stack:
        close(last)                                  # never ended
    # 2. the X events by start, longer first, file order; merged with the
    #    B/E scopes (kept in the order they were opened) by the same key
    xs = []
    for ts, seq, ph, name, dur in recs:
        if ph == 'X':
            end = ts + dur if dur is not None else max(ts, last)
            xs.append(Scope(ts, end, seq, name, False))

    def key(s):
        return (s.start, -s.end, s.seq)
    xs.sort(key=key)
    merged, a, b = [], 0, 0
    while a < len(scopes) or b < len(xs):
        if a < len(scopes) and (b >= len(xs) or key(scopes[a]) <= key(xs[b])):
            merged.append(scopes[a])
            a += 1
        else:
            merged.append(xs[b])
            b += 1
    out, stack = [], []
    for s in merged:
        while stack:
            t = stack[-1][0]
            if s.start < t.end:
                break
            if (s.start == t.end and s.be and t.be and
                    t.open_ord < s.open_ord and s.close_ord < t.close_ord):
                break
            stack.pop()
        if stack and s.end > stack[-1][0].end:
            s.end = stack[-1][0].end                 # clipped to the parent
        if len(stack) >= MAX_DEPTH:
            continue
        parent = stack[-1][1] if stack else None
        out.append((s, parent))
        stack.append((s, len(out) - 1))
    return out


def self_times(events):
    threads = {}
    for seq, e in enumerate(events):
        ph = e.get('ph')
        if not isinstance(ph, str) or len(ph) != 1 or ph not in 'BEX':
            continue
        ts = to_ns(e.get('ts'))
        if ts is None:
            continue
        if ph == 'X' and e.get('cat') == 'libcapture.frame':
            continue                                 # a frame, not a scope
        dur = None
        if ph == 'X':
            dur = to_ns(e.get('dur'))
            if dur is not None and dur < 0:
                dur = 0
        threads.setdefault(thread_key(e), []).append(
            (ts, seq, ph, clean_name(e.get('name')), dur))
    total = {}
    for recs in threads.values():
        nested = thread_scopes(recs)
        child = [0] * len(nested)
        for s, parent in nested:
            if parent is not None:
                child[parent] += s.end - s.start
        for (s, _), c in zip(nested, child):
            key = UNNAMED if s.name is None else escape(s.name)
            total[key] = total.get(key, 0) + (s.end - s.start) - c
    return total


def escape(name):
    return (name.replace('\\', '\\\\').replace('\t', '\\t')
            .replace('\n', '\\n').replace('\r', '\\r'))


def report(path):
    total = self_times(load_events(path))
    return b''.join(('%s\t%d\n' % (k, total[k])).encode('utf-8', 'surrogatepass')
                    for k in sorted(total, key=lambda k: k.encode(
                        'utf-8', 'surrogatepass')))


def check(corpus, expected):
    """Every expected file equals the report of its corpus trace."""
    import os
    if not os.path.isdir(os.path.join(corpus, 'chrome-trace')):
        print('SKIP: corpus not found at %s' % corpus)
        return 77
    bad = 0
    for sub in sorted(os.listdir(expected)):
        for name in sorted(os.listdir(os.path.join(expected, sub))):
            trace = os.path.join(corpus, 'chrome-trace', sub, name[:-4])
            with open(os.path.join(expected, sub, name), 'rb') as f:
                if f.read() != report(trace):
                    print('differs: %s' % trace)
                    bad += 1
    print('%d differ' % bad)
    return 1 if bad else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == '--check':
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-2])
    sys.stdout.buffer.write(report(sys.argv[1]))


if __name__ == '__main__':
    main()
