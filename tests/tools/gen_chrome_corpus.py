#!/usr/bin/env python3
"""A generated stand-in for ../shared/corpus/chrome-trace, and its expected
self times.

The corpus checks of tests/test_convert.c (every trace imports or fails
with one line; the importer's self time per scope name equals that of
chrome_self_time.py, an independent reading of the same rules) need real
traces from ../shared/corpus, which a clone of this repository alone does
not have. This script writes seeded, reproducible traces that exercise the
same rules instead: B/E and X events, nesting, several threads and
processes, thread names and counters, unclosed scopes, too many and
mismatched end events, events out of order, equal timestamps, zero
durations, fractional, string and nanosecond times, nameless events, the
object form, arrays cut short, gzip. Then it runs chrome_self_time.py on
each for the expected files, and finally COMMAND with CVT_CORPUS and
CVT_SELF_TIME pointing at them.

Usage: gen_chrome_corpus.py OUTDIR [COMMAND ARG...]
"""
import gzip
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chrome_self_time  # noqa: E402  (the reference, beside this file)

NAMES = ['frame', 'update', 'physics', 'render', 'draw', 'cull', 'upload',
         'audio', 'SwapBuffers', 'job', 'wait', 'gc', 'tab\tname', 'ünïcode']


def nested(rng, start, end, depth, names):
    """Well-nested (name, begin, end) spans inside [start, end)."""
    out, t = [], start
    while depth < 6 and t < end and rng.random() < 0.8:
        b = t + rng.randint(0, max(0, (end - t) // 4))
        e = min(end, b + rng.randint(0, max(1, (end - b) // 2)))
        if e < b:
            break
        name = rng.choice(names)
        out.append((name, b, e))
        out.extend(nested(rng, b, e, depth + 1, names))
        t = e + rng.randint(0, 3)
    return out


def ts_value(rng, us, style):
    """A timestamp in microseconds as the trace writes it."""
    if style == 'frac':
        return round(us + rng.randint(0, 999) / 1000.0, 3)
    if style == 'string':
        return str(us)
    return us


def thread_events(rng, pid, tid, kind, names, style):
    spans = []
    t = rng.randint(0, 50)
    for _ in range(rng.randint(2, 6)):
        length = rng.randint(20, 400)
        spans.append(('frame', t, t + length))
        spans.extend(nested(rng, t, t + length, 1, names))
        t += length + rng.randint(0, 20)
    ev = []
    for name, b, e in spans:
        use_x = kind == 'x' or (kind == 'mixed' and rng.random() < 0.5)
        if use_x:
            ev.append({'ph': 'X', 'name': name, 'pid': pid, 'tid': tid,
                       'ts': ts_value(rng, b, style), 'dur': e - b})
        else:
            ev.append({'ph': 'B', 'name': name, 'pid': pid, 'tid': tid,
                       'ts': ts_value(rng, b, style)})
            end = {'ph': 'E', 'pid': pid, 'tid': tid,
                   'ts': ts_value(rng, e, style)}
            if rng.random() < 0.5:
                end['name'] = name
            ev.append(end)
    if kind == 'unclosed':
        ev = [x for x in ev if not (x['ph'] == 'E' and rng.random() < 0.3)]
    if kind == 'extra-end':
        for _ in range(rng.randint(1, 4)):
            ev.insert(rng.randint(0, len(ev)),
                      {'ph': 'E', 'pid': pid, 'tid': tid,
                       'ts': rng.randint(0, t)})
    if kind == 'mismatched':
        for x in ev:
            if x['ph'] == 'E' and rng.random() < 0.3:
                x['name'] = rng.choice(names)
    if kind == 'nameless':
        for x in ev:
            if x['ph'] in 'BX' and rng.random() < 0.3:
                if rng.random() < 0.5:
                    del x['name']
                else:
                    x['name'] = ''
    if kind == 'zero':
        for x in ev:
            if x['ph'] == 'X' and rng.random() < 0.4:
                x['dur'] = 0
    ev.sort(key=lambda x: float(x['ts']))           # events in time order
    if kind == 'shuffled':
        rng.shuffle(ev)
    return ev, t


def trace(rng, kind):
    names = rng.sample(NAMES, rng.randint(3, len(NAMES)))
    style = rng.choice(['int', 'int', 'frac', 'string']) if kind != 'x' else 'int'
    events = []
    for p in range(rng.randint(1, 2)):
        pid = 100 + p
        for k in range(rng.randint(1, 3)):
            tid = pid * 10 + k
            events.append({'ph': 'M', 'name': 'thread_name', 'pid': pid,
                           'tid': tid, 'args': {'name': 'worker %d' % k}})
            ev, end = thread_events(rng, pid, tid, kind, names, style)
            events.extend(ev)
            events.append({'ph': 'C', 'name': 'memory', 'pid': pid,
                           'tid': tid, 'ts': end, 'args': {'mb': k + 1}})
    return events


KINDS = ['be', 'x', 'mixed', 'unclosed', 'extra-end', 'mismatched',
         'nameless', 'zero', 'shuffled']


def write(path, events, form, rng):
    if form == 'object':
        text = json.dumps({'traceEvents': events, 'displayTimeUnit': 'ns'},
                          ensure_ascii=False)
    else:
        text = json.dumps(events, ensure_ascii=False, indent=0)
    if form == 'partial':                    # a tracer that crashed
        cut = text.rfind('},', 0, len(text) - 1)
        text = text[:rng.randint(cut + 1, cut + 2)] if cut > 0 else text[:-1]
    data = text.encode('utf-8')
    if form == 'gz':
        data = gzip.compress(data, mtime=0)
        path += '.gz'
    with open(path, 'wb') as f:
        f.write(data)
    return path


def generate(out):
    rng = random.Random(20261130)
    made = 0
    for old in ('chrome-trace', 'self-time'):     # an earlier run's files
        shutil.rmtree(os.path.join(out, old), ignore_errors=True)
    for sub in ('catapult', 'speedscope'):
        tdir = os.path.join(out, 'chrome-trace', sub)
        edir = os.path.join(out, 'self-time', sub)
        os.makedirs(tdir, exist_ok=True)
        os.makedirs(edir, exist_ok=True)
        for i in range(24):
            kind = KINDS[i % len(KINDS)]
            form = ['array', 'array', 'object', 'partial', 'gz'][i % 5]
            path = write(os.path.join(tdir, '%s-%02d.json' % (kind, i)),
                         trace(rng, kind), form, rng)
            with open(os.path.join(edir, os.path.basename(path) + '.txt'),
                      'wb') as f:
                f.write(chrome_self_time.report(path))
            made += 1
    return made


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    out = sys.argv[1]
    print('generated %d traces and their self times in %s'
          % (generate(out), out))
    sys.stdout.flush()
    if len(sys.argv) > 2:
        env = dict(os.environ, CVT_CORPUS=out,
                   CVT_SELF_TIME=os.path.join(out, 'self-time'))
        sys.exit(subprocess.call(sys.argv[2:], env=env))


if __name__ == '__main__':
    main()
