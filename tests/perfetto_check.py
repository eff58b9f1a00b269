#!/usr/bin/env python3
"""Check a Perfetto trace written by capture_convert against read_capture.

    perfetto_check.py PROTOC PROTO_DIR READ_CAPTURE CAPTURE TRACE

Decodes TRACE with `protoc --decode=pf.Trace` and the project's own
schema (PROTO_DIR/perfetto_min.proto), rebuilds every packet's time
(sequence clocks, incremental deltas) and every track's slices from their
BEGIN/END pairs, and asserts, against `read_capture CAPTURE`:
  - every field decodes by name (no number the schema does not know);
  - one END per BEGIN on every track, never an END with nothing open;
  - the thread tracks' names are the capture's threads (read_capture
    --tree --csv names them), GPU tracks under a "GPU" process;
  - per CPU name: the calls and the self time (ns) of the ranking
    (read_capture --csv), from the decoded pairs, to 1 ns;
  - per GPU name: the calls, and the self time where no span of the track
    overlaps a sibling (the ranking's union rule gives the same then);
  - frames: one slice per row of read_capture --frames --csv, "frame N",
    its start (to the microsecond) and duration (to the nanosecond);
  - waits: the slices in category "wait" are the ranking's wait rows.
Prints one summary line; exits 1 with a message at the first mismatch.
"""
import csv
import io
import subprocess
import sys
from collections import defaultdict


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def parse_text(text):
    """protoc's text format into nested dicts of lists."""
    root = defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s == "}":
            stack.pop()
            continue
        if s.endswith("{"):
            node = defaultdict(list)
            stack[-1][s[:-1].strip()].append(node)
            stack.append(node)
            continue
        key, _, val = s.partition(":")
        val = val.strip()
        if val.startswith('"'):
            val = val[1:-1].encode("latin-1").decode("unicode_escape")
            val = val.encode("latin-1").decode("utf-8", "replace")
        stack[-1][key.strip()].append(val)
    return root


def one(node, key, default=None):
    v = node.get(key)
    return v[0] if v else default


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True)
    if p.returncode not in (0, 3):
        fail("%s: exit %d: %s" % (cmd[0], p.returncode,
                                  p.stderr.decode(errors="replace")))
    return p.stdout


def main():
    protoc, proto_dir, read_capture, cap, trace = sys.argv[1:6]
    warnings = open(sys.argv[6]).read() if len(sys.argv) > 6 else ""
    # GPU spans the export leaves out (no calibration, not measured): the
    # ranking counts them, the trace cannot hold them
    gpu_left_out = "GPU span(s)" in warnings
    # a TSC capture's blocks convert ticks with periods of their own, and
    # the reader subtracts a scope's children in its own block's period:
    # its self times then add up to the slices' within 1 ns a scope
    header = run([read_capture, cap]).decode()
    per_block = any(l.split()[:2] == ["clock", "tsc"]
                    for l in header.splitlines())
    raw = open(trace, "rb").read()
    text = run([protoc, "-I" + proto_dir, "--decode=pf.Trace",
                proto_dir + "/perfetto_min.proto"], raw).decode()
    for line in text.splitlines():
        k = line.strip().split(":")[0].split(" ")[0]
        if k[:1].isdigit():
            fail("a field the schema does not name: " + line.strip())
    tr = parse_text(text)

    seqs = {}  # id -> {clock, track, names, cats}
    tracks = {}  # uuid -> descriptor
    events = []  # (track uuid, ts, type, name, categories)
    counters = 0
    for pk in tr.get("packet", []):
        sid = int(one(pk, "trusted_packet_sequence_id", 0))
        if sid == 0:
            fail("a packet without a sequence id")
        st = seqs.setdefault(sid, {"clock": None, "track": None,
                                   "names": {}, "cats": {}, "clock_id": None})
        if int(one(pk, "sequence_flags", 0)) & 1:
            st.update(clock=None, track=None, names={}, cats={},
                      clock_id=None)
        d = one(pk, "trace_packet_defaults")
        if d:
            st["clock_id"] = int(one(d, "timestamp_clock_id", 0))
            ted = one(d, "track_event_defaults")
            st["track"] = int(one(ted, "track_uuid")) if ted else None
        idata = one(pk, "interned_data")
        if idata:
            for n in idata.get("event_names", []):
                st["names"][int(one(n, "iid"))] = one(n, "name")
            for n in idata.get("event_categories", []):
                st["cats"][int(one(n, "iid"))] = one(n, "name")
        cs = one(pk, "clock_snapshot")
        if cs:
            for ck in cs["clocks"]:
                if int(one(ck, "clock_id")) == 64:
                    st["clock"] = int(one(ck, "timestamp"))
            continue
        td = one(pk, "track_descriptor")
        if td:
            tracks[int(one(td, "uuid"))] = td
            continue
        te = one(pk, "track_event")
        if not te:
            continue
        ts = int(one(pk, "timestamp"))
        cid = int(one(pk, "timestamp_clock_id", 0)) or st["clock_id"]
        if cid == 64:
            if st["clock"] is None:
                fail("sequence %d: a delta before its clock snapshot" % sid)
            st["clock"] += ts
            ts = st["clock"]
        typ = one(te, "type")
        uuid = int(one(te, "track_uuid", 0)) or st["track"]
        if typ == "TYPE_COUNTER":
            counters += 1
            continue
        name = one(te, "name")
        if name is None and typ == "TYPE_SLICE_BEGIN":
            iid = int(one(te, "name_iid"))
            if iid not in st["names"]:
                fail("sequence %d: name iid %d not interned" % (sid, iid))
            name = st["names"][iid]
        cats = [st["cats"][int(c)] for c in te.get("category_iids", [])]
        events.append((uuid, ts, typ, name, cats))

    # slices, per track, from the BEGIN/END pairs
    open_ = defaultdict(list)
    last = {}
    self_ns = defaultdict(int)
    calls = defaultdict(int)
    waits = set()
    frames = []
    nbegin = nend = 0
    for uuid, ts, typ, name, cats in events:
        if uuid not in tracks:
            fail("an event on track %d, never described" % uuid)
        if ts < last.get(uuid, ts):
            fail("track %d: time goes back (%d after %d)"
                 % (uuid, ts, last[uuid]))
        last[uuid] = ts
        if typ == "TYPE_SLICE_BEGIN":
            nbegin += 1
            open_[uuid].append([name, ts, 0, cats])
        elif typ == "TYPE_SLICE_END":
            nend += 1
            if not open_[uuid]:
                fail("track %d: an END with no slice open" % uuid)
            name, b, child, cats = open_[uuid].pop()
            dur = ts - b
            if open_[uuid]:
                open_[uuid][-1][2] += dur
            td = tracks[uuid]
            if one(td, "thread"):
                kind = "cpu"
            elif int(one(td, "parent_uuid", 0)) == 2:
                kind = "gpu"
            elif one(td, "name") == "Frames":
                frames.append((name, b, dur))
                continue
            else:
                fail("a slice on track %d" % uuid)
            self_ns[(kind, name)] += dur - child
            calls[(kind, name)] += 1
            if "wait" in cats:
                waits.add(name)
    for uuid, o in open_.items():
        if o:
            fail("track %d: %d slice(s) never ended" % (uuid, len(o)))

    # the ranking
    rank = list(csv.DictReader(io.StringIO(
        run([read_capture, "--csv", cap]).decode())))
    # spans that overlap a sibling are moved to nest: the warning says so
    gpu_overlap = "GPU span time(s) moved" in warnings
    checked = 0
    for row in rank:
        key = (row["track"], row["name"])
        want_calls = int(row["calls"])
        if key[0] == "gpu" and gpu_left_out:
            continue
        if calls.get(key, 0) != want_calls:
            fail("%s %s: %d slices, read_capture %d calls"
                 % (key + (calls.get(key, 0), want_calls)))
        want = round(float(row["self_ms"]) * 1e6)
        if key[0] == "gpu" and gpu_overlap:
            continue
        if abs(self_ns[key] - want) > (want_calls if per_block else 1):
            fail("%s %s: self %d ns, read_capture %d ns"
                 % (key + (self_ns[key], want)))
        if row["wait"] == "1" and key[0] == "cpu" and key[1] not in waits:
            fail("%s: a wait, not in category wait" % key[1])
        checked += 1
    extra = set(calls) - {(r["track"], r["name"]) for r in rank}
    if extra:
        fail("slices read_capture does not rank: %s" % sorted(extra)[:3])

    # thread names
    want_threads = set()
    tree = run([read_capture, "--tree", "--csv", cap]).decode()
    for row in csv.DictReader(io.StringIO(tree)):
        if row.get("track") == "cpu" and row.get("thread"):
            want_threads.add(row["thread"])
    got_threads = {one(one(t, "thread"), "thread_name")
                   for t in tracks.values() if one(t, "thread")}
    if want_threads and not want_threads <= got_threads:
        fail("threads %s, read_capture %s" % (sorted(got_threads),
                                              sorted(want_threads)))

    # frames
    fr = run([read_capture, "--frames", "--csv", cap]).decode()
    rows = {}
    for row in csv.DictReader(io.StringIO(fr)):
        rows.setdefault(int(row["frame"]), row)
    if len(rows) != len(frames):
        fail("%d frame slices, read_capture %d frames"
             % (len(frames), len(rows)))
    t0 = frames[0][1] if frames else 0
    for (name, b, dur), (idx, row) in zip(frames, sorted(rows.items())):
        if name != "frame %d" % idx:
            fail("frame slice %s, read_capture frame %d" % (name, idx))
        if abs(dur - round(float(row["frame_ms"]) * 1e6)) > 1:
            fail("%s: %d ns, read_capture %s ms" % (name, dur,
                                                    row["frame_ms"]))
        if abs((b - t0) / 1e3 - float(row["start_s"]) * 1e6) > 1.5:
            fail("%s: begins %.6f s, read_capture %s" % (name, (b - t0) / 1e9,
                                                         row["start_s"]))
    print("ok: %d bytes, %d slices (%d begin, %d end), %d frames, "
          "%d counters, %d names checked%s%s, threads %s"
          % (len(raw), nbegin, nbegin, nend, len(frames), counters, checked,
             " (GPU self times not compared: overlapping spans)"
             if gpu_overlap else "",
             " (to 1 ns a scope: per-block periods)" if per_block else "",
             ",".join(sorted(got_threads))))


if __name__ == "__main__":
    main()
