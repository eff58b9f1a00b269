#!/usr/bin/env python3
"""Generated .puffin captures, checked through the importer end to end.

The puffin checks of the suite (test_puffin.c's corpus cases,
puffin_count.py --check, cli/puffin_reports.sh) read the four real captures
of ../shared/corpus/puffin and skip without them. This script writes
captures whose contents it knows instead, in every record version and
packing the importer reads (PFD1 and PFD2 with zstd; PFD3, PFD4 and PFD5
stored, lz4 and zstd; PFD4 and PFD5 names from scope_name or
function_name, first listed in a later frame), from seeded random frames
of nested scopes on
one to three threads. It encodes them from docs/PUFFIN.md, sharing no code
with tools/convert/puffin_in.c. For each file it then checks that
  - puffin_count.py (the independent counter) counts the frames, threads
    and scopes written, and
  - capture_convert IN.puffin OUT.cap, then OUT.cap -> OUT.json (Chrome
    trace), holds exactly the scopes written (thread, name, start, duration
    in ns from the earliest time) and the frames (index, begin, duration).

Usage: gen_puffin.py CAPTURE_CONVERT OUTDIR
zstd packing needs the `zstandard` module or the `zstd` command.
"""
import collections
import json
import os
import random
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import puffin_count  # noqa: E402  (the independent counter)


def zstd(data):
    try:
        import zstandard  # type: ignore
        return zstandard.ZstdCompressor().compress(data)
    except ImportError:
        return subprocess.run(["zstd", "-q", "-c"], input=data,
                              stdout=subprocess.PIPE, check=True).stdout


def lz4_block(data):
    """One raw lz4 block holding data as a single literal run."""
    n = len(data)
    out = bytearray([min(n, 15) << 4])
    if n >= 15:
        rest = n - 15
        while rest >= 255:
            out.append(255)
            rest -= 255
        out.append(rest)
    return bytes(out) + data


# ---- bincode (varint integers, zigzag signed) ----------------------------
def uvar(v):
    if v < 251:
        return bytes([v])
    if v < 1 << 16:
        return b"\xfb" + struct.pack("<H", v)
    if v < 1 << 32:
        return b"\xfc" + struct.pack("<I", v)
    return b"\xfd" + struct.pack("<Q", v)


def ivar(v):
    return uvar((v << 1) ^ (v >> 63) if v >= 0 else ((-v - 1) << 1) | 1)


def bstr(s):
    b = s.encode("utf-8")
    return uvar(len(b)) + b


def str8(s):
    b = s.encode("utf-8")
    assert len(b) < 128
    return bytes([len(b)]) + b


# ---- what a capture holds -----------------------------------------------
NAMES = ["main_loop", "update", "physics", "render", "sleep", "jobs",
         "PuffinServerImpl::send", "decode", "upload"]


def scopes_in(rng, begin, end, depth):
    """[(name, start, stop, children)] nested inside [begin, end]."""
    out, t = [], begin
    while depth < 4 and t < end - 2 and rng.random() < 0.75:
        start = rng.randint(t, t + (end - t) // 3)
        stop = rng.randint(start + 1, end)
        out.append((rng.choice(NAMES), start, stop,
                    scopes_in(rng, start, stop, depth + 1)))
        t = stop + rng.randint(0, 5)
    return out


def capture(rng):
    threads = [("main", rng.choice([None, 1000]))]
    for k in range(rng.randint(0, 2)):
        threads.append(("worker %d" % k, 2000 + k))
    frames, t = [], 1_700_000_000_000_000_000 + rng.randint(0, 10 ** 6)
    first = rng.randint(0, 20)
    for i in range(rng.randint(4, 10)):
        length = rng.randint(1000, 50000)
        per_thread = {}
        for th in threads:
            tops = scopes_in(rng, t, t + length, 0)
            if tops or th is threads[0]:
                per_thread[th] = tops
        frames.append((first + i, t, t + length, per_thread))
        t += length + rng.randint(0, 3000)
    return frames


def flat(scopes):
    for name, start, stop, kids in scopes:
        yield name, start, stop
        yield from flat(kids)


def count_scopes(scopes):
    return sum(1 + count_scopes(k) for _, _, _, k in scopes)


def depth_of(scopes):
    return max((1 + depth_of(k) for _, _, _, k in scopes), default=0)


# ---- encoding -------------------------------------------------------------
def stream(scopes, v4, ids):
    out = bytearray()
    for name, start, stop, kids in scopes:
        body = stream(kids, v4, ids)
        if v4:
            out += b"(" + struct.pack("<Iq", ids[name], start) + str8("")
        else:
            out += (b"(" + struct.pack("<q", start) + str8(name) +
                    str8("src/main.rs:%d" % (10 + NAMES.index(name))) +
                    str8("n: %d" % len(kids)))
        out += struct.pack("<Q", len(body)) + body + b")" + struct.pack("<q", stop)
    return bytes(out)


def thread_streams(per_thread, v4, ids):
    out = uvar(len(per_thread))
    for (tname, tstart), tops in per_thread.items():
        out += (b"\0" if tstart is None else b"\1" + ivar(tstart)) + bstr(tname)
        data = stream(tops, v4, ids)
        begin = min((s for _, s, _, _ in tops), default=0)
        end = max((e for _, _, e, _ in tops), default=0)
        out += (uvar(len(data)) + data + uvar(count_scopes(tops)) +
                uvar(depth_of(tops)) + ivar(begin) + ivar(end))
    return out


def details(names, ids, rng):
    out = uvar(len(names))
    for name in names:
        out += b"\1" + uvar(ids[name])
        if rng.random() < 0.5:
            out += b"\1" + bstr(name) + bstr("fn_" + name)
        else:                          # the name is the function's name
            out += b"\0" + bstr(name)
        out += bstr("src/lib.rs") + uvar(7 + ids[name])
    return out


LATE = []   # names of the last PFD4 file listed in a later frame than used


def encode(frames, version, kind, rng):
    ids = {n: i + 1 for i, n in enumerate(NAMES)}
    named = set()
    LATE.clear()
    out = bytearray(b"PUF0")
    for index, begin, end, per_thread in frames:
        streams = thread_streams(per_thread, version >= 4, ids)
        n_scopes = sum(count_scopes(s) for s in per_thread.values())
        meta = (uvar(index) + ivar(begin) + ivar(end) + uvar(len(streams)) +
                uvar(n_scopes))
        if version == 1:
            packed = zstd(uvar(index) + streams + ivar(begin) + ivar(end) +
                          uvar(len(streams)) + uvar(n_scopes))
            out += b"PFD1" + struct.pack("<I", len(packed)) + packed
            continue
        if version == 2 or kind == 2:
            packed = zstd(streams)
        elif kind == 1:
            packed = struct.pack("<I", len(streams)) + lz4_block(streams)
        else:
            packed = streams
        if version == 5:                # PFD5: the meta without its size
            out += b"PFD5" + meta
        else:
            out += b"PFD%d" % version + struct.pack("<I", len(meta)) + meta
        out += struct.pack("<I", len(packed))
        if version >= 3:
            out += bytes([kind])
        out += packed
        if version >= 4:
            used = sorted({n for s in per_thread.values()
                           for n, _, _, in flat(s)} - named, key=NAMES.index)
            # the first frame may leave its names to later frames: an id
            # named after its use (the importer reads the whole file first)
            later = index == frames[0][0] and rng.random() < 0.7
            det = details([] if later else used, ids, rng)
            if not later:
                named |= set(used)
            else:
                LATE.extend(used)
            out += (struct.pack("<I", len(det)) if version == 4 else b"") + det
    if version >= 4:                   # names still owed go in a last frame
        rest = [n for n in NAMES if n not in named and any(
            n == m for f in frames for s in f[3].values()
            for m, _, _ in flat(s))]
        if rest:
            index, begin, end = frames[-1][0] + 1, frames[-1][2], frames[-1][2]
            frames.append((index, begin, end, {}))
            streams = thread_streams({}, True, ids)
            meta = uvar(index) + ivar(begin) + ivar(end) + uvar(len(streams)) + uvar(0)
            det = details(rest, ids, rng)
            if version == 4:
                out += (b"PFD4" + struct.pack("<I", len(meta)) + meta +
                        struct.pack("<I", len(streams)) + b"\0" + streams +
                        struct.pack("<I", len(det)) + det)
            else:
                out += (b"PFD5" + meta + struct.pack("<I", len(streams)) +
                        b"\0" + streams + det)
    if rng.random() < 0.5:
        out += b"\0\0\0\0"             # the optional end marker
    return bytes(out)


# ---- checks ---------------------------------------------------------------
def expected(frames):
    origin = min(f[1] for f in frames)
    scopes = collections.Counter()
    for _, _, _, per_thread in frames:
        for (tname, _), tops in per_thread.items():
            for name, start, stop in flat(tops):
                scopes[(tname, name, start - origin, stop - start)] += 1
    fr = [(i, b - origin, e - b) for i, b, e, _ in frames]
    threads = {th for f in frames for th in f[3]}
    return scopes, fr, len(threads)


def ns(us):
    return int(round(float(us) * 1000))


def imported(json_path):
    doc = json.load(open(json_path))
    names, scopes, frames = {}, collections.Counter(), []
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        if e.get("cat") == "libcapture.frame":
            frames.append((e["args"]["index"], ns(e["ts"]), ns(e["dur"])))
        else:
            scopes[(names.get((e["pid"], e["tid"])), e["name"], ns(e["ts"]),
                    ns(e["dur"]))] += 1
    return scopes, sorted(frames)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-2])
    tool, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    rng = random.Random(911)
    cases = [(1, 2), (2, 2), (3, 0), (3, 1), (3, 2), (4, 0), (4, 1), (4, 2),
             (5, 0), (5, 1), (5, 2)]
    bad = 0
    for n, (version, kind) in enumerate(cases):
        frames = capture(rng)
        data = encode(frames, version, kind, rng)
        base = os.path.join(out, "gen-PFD%d-kind%d-%02d" % (version, kind, n))
        with open(base + ".puffin", "wb") as f:
            f.write(data)
        want_scopes, want_frames, want_threads = expected(frames)
        got = puffin_count.count(base + ".puffin")
        problems = []
        if got[:3] != (len(frames), want_threads, sum(want_scopes.values())):
            problems.append("puffin_count.py counts %s, written %s" % (
                got[:3], (len(frames), want_threads, sum(want_scopes.values()))))
        for src, dst in ((".puffin", ".cap"), (".cap", ".json")):
            r = subprocess.run([tool, base + src, base + dst],
                               stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                problems.append("capture_convert %s -> %s: exit %d: %s" % (
                    src, dst, r.returncode, r.stderr.strip()))
                break
            if r.stderr:
                problems.append("capture_convert %s -> %s warned: %s" % (
                    src, dst, r.stderr.strip()))
        else:
            scopes, fr = imported(base + ".json")
            if scopes != want_scopes:
                problems.append("scopes differ: missing %s, extra %s" % (
                    list((want_scopes - scopes).items())[:3],
                    list((scopes - want_scopes).items())[:3]))
            if fr != want_frames:
                problems.append("frames differ: %s vs written %s" % (
                    fr[:3], want_frames[:3]))
        name = os.path.basename(base)
        if problems:
            bad += 1
            print("FAIL %s: %s" % (name, "; ".join(problems)))
        else:
            print("ok   %s: %d frames, %d threads, %d scopes%s" % (
                name, len(frames), want_threads, sum(want_scopes.values()),
                ", %d names listed after their first use" % len(set(LATE))
                if version >= 4 else ""))
    print("%d passed, %d failed" % (len(cases) - bad, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
