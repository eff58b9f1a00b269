#!/usr/bin/env python3
"""Count what a .puffin capture holds, straight from its bytes.

An independent check on tools/convert/puffin_in.c: it shares no code with
the importer and is written from puffin's Rust sources (see docs/PUFFIN.md).
It prints, per file:

    frames threads scopes ids named unnamed versions

where `threads` counts distinct (start_time, name) thread keys, `scopes`
every scope record in every stream, `ids` the distinct scope identities
(PFD4: numeric ids; PFD1..3: (name, location) pairs), `named` those with a
name somewhere in the file, `unnamed` the rest and `unnamed_scopes` the
scope records whose identity is unnamed. With -v it also prints each
named identity with its location, and the first and last frame (index,
begin, end in ns). With --skip-records N it counts the file as if its
first N frame records were not there (puffin's lesson: names lost with the
frame that carried them).

zstd data is decompressed with the `zstandard` module when present, else
with the `zstd` command; lz4 blocks with the small decoder below.
Usage: puffin_count.py [-v] [--skip-records N] FILE...
       puffin_count.py --check DIR    compare DIR's capture_PFD*.puffin
                                      with EXPECTED (exit 77: skipped)
"""
import os
import struct
import subprocess
import sys


def unzstd(data):
    try:
        import zstandard  # type: ignore
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except ImportError:
        return subprocess.run(["zstd", "-d", "-q", "-c"], input=data,
                              stdout=subprocess.PIPE, check=True).stdout


def unlz4_block(src, size):
    """Decode one raw lz4 block (no frame) whose output is `size` bytes."""
    out = bytearray()
    i = 0
    while i < len(src):
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            while True:
                b = src[i]
                i += 1
                lit += b
                if b != 255:
                    break
        out += src[i:i + lit]
        i += lit
        if i >= len(src):
            break
        off = src[i] | (src[i + 1] << 8)
        i += 2
        mlen = token & 15
        if mlen == 15:
            while True:
                b = src[i]
                i += 1
                mlen += b
                if b != 255:
                    break
        mlen += 4
        for _ in range(mlen):
            out.append(out[-off])
    if len(out) != size:
        raise ValueError("lz4: %d bytes, expected %d" % (len(out), size))
    return bytes(out)


def unpack(kind, data):
    if kind == 0:
        return data
    if kind == 1:
        (size,) = struct.unpack_from("<I", data, 0)
        return unlz4_block(data[4:], size)
    if kind == 2:
        return unzstd(data)
    raise ValueError("unknown compression kind %d" % kind)


class Bincode:
    """serde + bincode 1 with varint integers, as puffin's bincode::options()."""

    def __init__(self, data):
        self.d = data
        self.p = 0

    def take(self, n):
        if self.p + n > len(self.d):
            raise ValueError("bincode: out of data")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def u8(self):
        return self.take(1)[0]

    def uvar(self):
        t = self.u8()
        if t < 251:
            return t
        n = {251: 2, 252: 4, 253: 8}[t]
        return int.from_bytes(self.take(n), "little")

    def ivar(self):
        z = self.uvar()
        return (z >> 1) ^ -(z & 1)

    def string(self):
        return self.take(self.uvar()).decode("utf-8")

    def option(self, f):
        return f() if self.u8() else None

    def done(self):
        return self.p == len(self.d)


def thread_streams(b):
    """BTreeMap<ThreadInfo, StreamInfo> -> [((start, name), stream bytes)]"""
    out = []
    for _ in range(b.uvar()):
        start = b.option(b.ivar)
        name = b.string()
        stream = b.take(b.uvar())
        b.uvar()  # num_scopes
        b.uvar()  # depth
        b.ivar()  # range start
        b.ivar()  # range end
        out.append(((start, name), stream))
    return out


DEPTHS = {}  # scope records by nesting depth (0: top level), for -v


def walk(stream, with_names, ids, names):
    """Count scope records in one stream, recursively, via the size field.
    `ids` maps each identity to its number of records."""
    count = 0
    todo = [(0, len(stream), 0)]
    while todo:
        pos, end, depth = todo.pop()
        while pos < end and stream[pos] == 0x28:  # '('
            pos += 1
            if with_names:  # PFD1..3: time, name, location, data
                pos += 8
                n = stream[pos]
                name = stream[pos + 1:pos + 1 + n]
                pos += 1 + n
                n = stream[pos]
                loc = stream[pos + 1:pos + 1 + n]
                pos += 1 + n
                key = (name, loc)
                names[key] = (name.decode(), loc.decode())
            else:  # PFD4: id u32, time, data
                (key,) = struct.unpack_from("<I", stream, pos)
                pos += 4 + 8
            ids[key] = ids.get(key, 0) + 1
            DEPTHS[depth] = DEPTHS.get(depth, 0) + 1
            pos += 1 + stream[pos]  # data
            (size,) = struct.unpack_from("<Q", stream, pos)
            pos += 8
            todo.append((pos, pos + size, depth + 1))
            pos += size
            assert stream[pos] == 0x29, "expected ')'"
            pos += 9
            count += 1
    return count


def count(path, skip=0, verbose=False):
    data = open(path, "rb").read()
    assert data[:4] == b"PUF0", "not a .puffin file"
    p = 4
    frames = scopes = 0
    threads, ids, names, versions = set(), {}, {}, set()
    DEPTHS.clear()
    ranges = []
    record = 0
    while p < len(data):
        tag = data[p:p + 4]
        p += 4
        if tag == b"\0\0\0\0":
            break
        versions.add(tag.decode())
        details = None
        if tag == b"PFD1":
            (n,) = struct.unpack_from("<I", data, p)
            b = Bincode(unzstd(data[p + 4:p + 4 + n]))
            p += 4 + n
            index = b.uvar()
            streams = thread_streams(b)
            rng = (b.ivar(), b.ivar())
            b.uvar(), b.uvar()
            assert b.done()
        else:
            if tag == b"PFD5":         # the meta without its size
                meta = Bincode(data)
                meta.p = p
            else:
                (n,) = struct.unpack_from("<I", data, p)
                meta = Bincode(data[p + 4:p + 4 + n])
                p += 4 + n
            index = meta.uvar()
            rng = (meta.ivar(), meta.ivar())
            if tag == b"PFD5":
                meta.uvar(), meta.uvar()
                p = meta.p
            (n,) = struct.unpack_from("<I", data, p)
            p += 4
            kind = 2
            if tag != b"PFD2":
                kind = data[p]
                p += 1
            b = Bincode(unpack(kind, data[p:p + n]))
            p += n
            streams = thread_streams(b)
            assert b.done()
            if tag == b"PFD4":
                (n,) = struct.unpack_from("<I", data, p)
                details = Bincode(data[p + 4:p + 4 + n])
                p += 4 + n
            elif tag == b"PFD5":       # the details without their size
                d = Bincode(data)
                d.p = p
                for _ in range(d.uvar()):
                    d.option(d.uvar)
                    d.option(d.string)
                    d.string(), d.string(), d.uvar()
                details = Bincode(data[p:d.p])
                p = d.p
        record += 1
        if record <= skip:
            continue
        frames += 1
        ranges.append((index,) + rng)
        for key, stream in streams:
            threads.add(key)
            scopes += walk(stream, tag not in (b"PFD4", b"PFD5"), ids, names)
        if details is not None:
            for _ in range(details.uvar()):
                sid = details.option(details.uvar)
                scope_name = details.option(details.string)
                function_name = details.string()
                if sid is not None and sid not in names:
                    loc = details.string()
                    names[sid] = (scope_name or function_name,
                                  "%s:%d" % (loc, details.uvar()))
                else:
                    details.string()
                    details.uvar()
    named = sum(1 for i in ids if i in names)
    unnamed_scopes = sum(n for i, n in ids.items() if i not in names)
    if verbose:
        for i in sorted(ids, key=str):
            print("  id %s: %d scopes, %s" % (i, ids[i], names.get(i)))
        ranges.sort()
        print("  first frame", ranges[0], "last frame", ranges[-1])
        print("  scopes by depth", sorted(DEPTHS.items()))
    return (frames, len(threads), scopes, len(ids), named, len(ids) - named,
            unnamed_scopes, ",".join(sorted(versions)))


# What tests/test_puffin.c expects of the corpus; keep the two in step.
# (file, skip records) -> (frames, threads, scopes, ids, named, unnamed,
#                          unnamed_scopes, versions)
EXPECTED = {
    ("capture_PFD1.puffin", 0): (50, 1, 100, 2, 2, 0, 0, "PFD1"),
    ("capture_PFD2.puffin", 0): (51, 1, 101, 3, 3, 0, 0, "PFD2"),
    ("capture_PFD3.puffin", 0): (51, 1, 101, 3, 3, 0, 0, "PFD3"),
    ("capture_PFD4.puffin", 0): (33, 2, 98, 3, 3, 0, 0, "PFD4"),
    ("capture_PFD4.puffin", 1): (32, 2, 96, 3, 1, 2, 64, "PFD4"),
}


def check(folder):
    if not os.path.isdir(folder):
        print("skipped: %s is absent" % folder)
        return 77
    bad = 0
    for (name, skip), want in sorted(EXPECTED.items()):
        try:
            got = count(os.path.join(folder, name), skip)
        except (FileNotFoundError, subprocess.CalledProcessError) as e:
            print("skipped: %s" % e)
            return 77
        print("%s%s: %s" % (name, " minus %d" % skip if skip else "",
                            "ok" if got == want else
                            "got %s, expected %s" % (got, want)))
        bad += got != want
    print("%d passed, %d failed" % (len(EXPECTED) - bad, bad))
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["--check"]:
        sys.exit(check(args[1]))
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    skip = 0
    if args[:1] == ["--skip-records"]:
        skip = int(args[1])
        args = args[2:]
    for path in args:
        print(path.rsplit("/", 1)[-1],
              "frames=%d threads=%d scopes=%d ids=%d named=%d unnamed=%d "
              "unnamed_scopes=%d versions=%s" % count(path, skip, verbose))


if __name__ == "__main__":
    main()
