#!/usr/bin/env python3
"""read_capture --summary and --export over many captures.

    fleet_many.py READ_CAPTURE FLEET_GEN

Generates 1,000 small captures with fleet_gen (known truth: build 1.1 on
vendorB makes `shadows` 25 % slower), then checks:
  - --summary --csv over all of them (through --files-from): one row
    each, in bounded memory (peak RSS within 8 MiB of a 3-file run, and
    under 64 MiB);
  - the rows carry the truth: `shadows` is the top scope, near 2.5 ms per
    frame exactly where it should be, near 2.0 ms elsewhere;
  - an unreadable file and a foreign file are reported in one line each
    and skipped, the others summarised, exit 2;
  - --export's four tables agree with --summary: frames per capture, the
    top scope's self time per frame, counter samples;
  - one long capture past the per-frame values' budget (fleet_gen --long):
    --summary, --export and capture_convert's SVG flame graph in memory
    that does not grow with its length (10,000 against 60,000 frames of
    40 scopes: the exact per-frame values alone would take 24 MB more),
    and every scopes.csv.gz row of it exact.
"""
import csv
import gzip
import io
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

READ, GEN = sys.argv[1], sys.argv[2]
CONVERT = sys.argv[3] if len(sys.argv) > 3 else None
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)
    else:
        print("ok  ", what)


def run(args, stdin=None):
    """Run; return (exit status, stdout, stderr, peak RSS in KiB)."""
    p = subprocess.Popen(args, stdin=subprocess.PIPE if stdin else None,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(stdin.encode() if stdin else None)
    # communicate() reaped the child; its rusage is in RUSAGE_CHILDREN only
    # as a maximum over all children, so measure each run in a fresh child
    return p.returncode, out.decode(), err.decode()


TIME = "/usr/bin/time"  # GNU time (Debian package `time`, in dev.sh's list)


def peak_rss_kib(args):
    """Exit status and peak RSS of the command alone (GNU time's %M: a
    child forked from Python would count Python's own pages)."""
    p = subprocess.run([TIME, "-f", "%M"] + args, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, int(p.stderr.strip().splitlines()[-1])


with tempfile.TemporaryDirectory() as tmp:
    caps = os.path.join(tmp, "caps")
    os.mkdir(caps)
    subprocess.run([GEN, caps, "125"], check=True)
    files = sorted(os.path.join(caps, f) for f in os.listdir(caps))
    check(len(files) == 1000, "fleet_gen wrote 1000 captures")
    lst = os.path.join(tmp, "all.txt")
    with open(lst, "w") as f:
        f.write("\n".join(files) + "\n")
    few = os.path.join(tmp, "few.txt")
    with open(few, "w") as f:
        f.write("\n".join(files[:3]) + "\n")

    rc, out, err = run([READ, "--summary", "--csv", "--files-from", lst])
    rows = list(csv.DictReader(io.StringIO(out)))
    check(rc == 0 and err == "", "--summary over 1000 files exits 0, silent")
    check(len(rows) == 1000, "one row per capture (%d)" % len(rows))
    check(len({r["capture_id"] for r in rows}) == 1000,
          "every capture has its own id")

    if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ:
        # a sanitizer keeps freed memory in quarantine: RSS says nothing
        print("skip memory check: running under a sanitizer")
    elif os.access(TIME, os.X_OK):
        rc_all, rss_all = peak_rss_kib([READ, "--summary", "--csv",
                                        "--files-from", lst])
        rc_few, rss_few = peak_rss_kib([READ, "--summary", "--csv",
                                        "--files-from", few])
        print("     peak RSS: %d KiB for 1000 captures, %d KiB for 3" %
              (rss_all, rss_few))
        check(rc_all == 0 and rc_few == 0, "both runs exit 0")
        check(rss_all <= rss_few + 2 * 1024 and rss_all <= 64 * 1024,
              "memory does not grow with the number of captures")
    else:
        print("skip memory check: %s (package `time`) is not installed" % TIME)

    slow = [r for r in rows if r["build"] == "1.1" and r["gpu"] == "vendorB"]
    rest = [r for r in rows if not (r["build"] == "1.1" and r["gpu"] == "vendorB")]
    check(len(slow) == 250 and len(rest) == 750, "250 captures of 1.1/vendorB")
    check(all(r["top1_scope"] == "shadows" for r in rows),
          "shadows is every capture's top scope")
    check(all(2.35 < float(r["top1_self_ms_per_frame"]) < 2.65 for r in slow),
          "1.1/vendorB: shadows near 2.5 ms per frame")
    check(all(1.85 < float(r["top1_self_ms_per_frame"]) < 2.15 for r in rest),
          "elsewhere: shadows near 2.0 ms per frame")
    check(all(r["frames"] == "120" and r["program"] == "fleet-game" and
              r["warnings"] == "0" for r in rows), "frames, program, warnings")

    # unreadable and foreign files are skipped, named, exit 2
    missing = os.path.join(tmp, "missing.cap")
    foreign = os.path.join(tmp, "foreign.cap")
    with open(foreign, "w") as f:
        f.write("not a capture\n")
    rc, out, err = run([READ, "--summary", "--csv", files[0], missing,
                        foreign, files[1]])
    rows2 = list(csv.DictReader(io.StringIO(out)))
    check(rc == 2, "a bad file makes the exit status 2 (%d)" % rc)
    check(len(rows2) == 2, "the good files are still summarised")
    lines = err.splitlines()
    check(len(lines) == 2 and lines[0].startswith("error: " + missing + ": ")
          and lines[1].startswith("error: " + foreign + ": "),
          "one line per bad file, naming it:\n" + err)

    # --export agrees with --summary
    some = files[:4] + files[-4:]
    exp = os.path.join(tmp, "export")
    rc, out, err = run([READ, "--export", exp] + some)
    check(rc == 0 and out == "" and "8 capture(s) exported" in err,
          "--export exits 0 and says what it wrote")

    def table(name):
        with gzip.open(os.path.join(exp, name), "rt", newline="") as f:
            return list(csv.DictReader(f))
    caps_t, frames_t = table("captures.csv.gz"), table("frames.csv.gz")
    scopes_t, counters_t = table("scopes.csv.gz"), table("counters.csv.gz")
    rc, out, err = run([READ, "--summary", "--csv"] + some)
    summary = {r["capture_id"]: r for r in csv.DictReader(io.StringIO(out))}
    check({r["capture_id"]: r for r in caps_t} == summary,
          "captures.csv.gz holds the --summary rows")
    nframes = defaultdict(int)
    for r in frames_t:
        nframes[r["capture_id"]] += 1
    check(all(nframes[k] == int(v["frames"]) for k, v in summary.items()),
          "frames.csv.gz: one row per frame of each capture")
    self_sum = defaultdict(float)
    for r in scopes_t:
        if r["scope"] == "shadows":
            self_sum[r["capture_id"]] += float(r["self_ms"])
    check(all("%.3f" % (self_sum[k] / int(v["frames"])) ==
              v["top1_self_ms_per_frame"] for k, v in summary.items()),
          "scopes.csv.gz: shadows' self time per frame as --summary prints it")
    ncount = defaultdict(int)
    for r in counters_t:
        ncount[(r["capture_id"], r["counter"])] += 1
    check(all(ncount[(k, "rss_mib")] == 120 for k in summary),
          "counters.csv.gz: every rss_mib sample")

    # one long capture: memory bounded whatever its length (issue 12)
    LONG_NAMES = 40

    def long_ns(k, f):
        return 1000 + (k * 7919 + f * 104729) % 5000
    short_cap = os.path.join(tmp, "short.cap")
    long_cap = os.path.join(tmp, "long.cap")
    subprocess.run([GEN, "--long", short_cap, "10000"], check=True)
    subprocess.run([GEN, "--long", long_cap, "60000"], check=True)
    lexp = os.path.join(tmp, "long-export")
    rc, out, err = run([READ, "--export", lexp, long_cap])
    check(rc == 0 and "1 capture(s) exported" in err,
          "--export of a capture past the budget exits 0")
    with gzip.open(os.path.join(lexp, "scopes.csv.gz"), "rt",
                   newline="") as f:
        bad, n, seen = 0, 0, set()
        for r in csv.DictReader(f):
            n += 1
            k, fr = int(r["scope"][len("long_"):]), int(r["frame"])
            seen.add((k, fr))
            bad += r["self_ms"] != "%.6f" % (long_ns(k, fr) / 1e6)
    check(n == LONG_NAMES * 60000 and len(seen) == n and bad == 0,
          "scopes.csv.gz past the budget: every (scope, frame) once, exact "
          "(%d rows, %d wrong)" % (n, bad))
    rc, out, err = run([READ, "--summary", "--csv", long_cap])
    row = list(csv.DictReader(io.StringIO(out)))
    top = max(range(LONG_NAMES),
              key=lambda k: (sum(long_ns(k, f) for f in range(60000)), -k))
    want = sum(long_ns(top, f) for f in range(60000)) / 1e6 / 60000
    check(rc == 0 and len(row) == 1 and row[0]["frames"] == "60000" and
          row[0]["top1_scope"] == "long_%d" % top and
          row[0]["top1_self_ms_per_frame"] == "%.3f" % want,
          "--summary past the budget: its top scope exact")
    if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ:
        print("skip memory check of the long capture: under a sanitizer")
    elif os.access(TIME, os.X_OK):
        runs = [("--summary", lambda c: [READ, "--summary", c]),
                ("--export", lambda c: [READ, "--export",
                                        os.path.join(tmp, "x"), c])]
        if CONVERT:
            runs.append(("the SVG flame graph", lambda c: [
                CONVERT, c, os.path.join(tmp, "flame.svg")]))
        else:
            print("skip the SVG flame graph: no capture_convert given")
        for what, argv in runs:
            # --export's pack in memory up to 6 MiB less 64 bytes a frame
            # (the long capture's then spills to its temporary file, as a
            # longer one's would past AN_PACK_MAX_BYTES)
            os.environ["CAP_PACK_BYTES"] = str(6 << 20)
            rc_s, rss_s = peak_rss_kib(argv(short_cap))
            rc_l, rss_l = peak_rss_kib(argv(long_cap))
            del os.environ["CAP_PACK_BYTES"]
            print("     %s peak RSS: %d KiB at 10,000 frames, %d KiB at "
                  "60,000" % (what, rss_s, rss_l))
            check(rc_s == 0 and rc_l == 0 and rss_l <= rss_s + 8 * 1024 and
                  rss_l <= 64 * 1024,
                  "%s: memory does not grow with the capture's length" % what)
    else:
        print("skip memory check: %s (package `time`) is not installed" % TIME)

print("%d failed" % failures)
sys.exit(1 if failures else 0)
