#!/usr/bin/env bash
# End to end over loopback (docs/LIVE.md): game_sim records into its file
# and serves the same capture (CAP_LISTEN=127.0.0.1:0); capture_remote
# connects late and records a 1-second window in format 3.0 (--format-version);
# read_capture reads another
# window straight from the socket. Every frame of each window (index,
# frame time, GPU time) is in the program's file, the window's frames are
# consecutive, every scope name of the file is in the remote capture, and
# the exit statuses are 0. Bounded: each command runs under `timeout`.
#   live_game_sim.sh GAME_SIM CAPTURE_REMOTE READ_CAPTURE CAPTURE_CONVERT
set -u
sim=$1 remote=$2 rc_tool=$3 conv=$4
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export NO_COLOR=1

CAP_LISTEN=127.0.0.1:0 timeout 60 "$sim" "$tmp/file.cap" --seconds 4 \
    --fps-cap 120 --workers 3 2>"$tmp/sim.err" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.*(port \([0-9]*\),.*/\1/p' "$tmp/sim.err")
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || fail "game_sim did not serve its capture: $(cat "$tmp/sim.err")"
sleep 0.5   # connect late
timeout 30 "$remote" -q --seconds 1 --format-version 3.0 "127.0.0.1:$port" \
    "$tmp/remote.cap" || fail "capture_remote exit status $?"
timeout 30 "$rc_tool" --frames --csv --seconds 1 "127.0.0.1:$port" \
    >"$tmp/live.csv" 2>"$tmp/live.err" || fail "read_capture HOST:PORT: $(cat "$tmp/live.err")"
wait "$pid" || fail "game_sim exit status $?"
pid=

# --format-version: the window is written in the version asked for
head=$("$rc_tool" "$tmp/remote.cap" 2>/dev/null | head -1)
[ "$head" = "capture   $tmp/remote.cap (format 3.0)" ] ||
    fail "remote --format-version 3.0: $head"
echo "ok   remote: written as format 3.0"
frames() { cut -d, -f1,3,4 | grep -v '^frame' | sort -u; }
"$rc_tool" --frames --csv "$tmp/file.cap" 2>/dev/null | frames >"$tmp/f"
for w in remote live; do
    if [ $w = remote ]; then
        "$rc_tool" --frames --csv "$tmp/remote.cap" 2>/dev/null | frames >"$tmp/w"
    else
        frames <"$tmp/live.csv" >"$tmp/w"
    fi
    n=$(wc -l <"$tmp/w")
    [ "$n" -ge 3 ] || fail "$w: only $n frame(s)"
    extra=$(comm -23 "$tmp/w" "$tmp/f")
    [ -z "$extra" ] || fail "$w: frames not in the program's file: $extra"
    first=$(cut -d, -f1 "$tmp/w" | sort -n | head -1)
    last=$(cut -d, -f1 "$tmp/w" | sort -n | tail -1)
    [ $((last - first + 1)) = "$n" ] || fail "$w: frames $first..$last are not all there ($n)"
    echo "ok   $w: frames $first..$last ($n) equal to the file's"
done
# every scope of the window is the program's, to the ns (times keep the
# program's ticks and clock: docs/CONVERT.md). The window holds the span
# trees that began once capture_remote had connected (in its first frame,
# a thread's stretch already handed to the writer is not in it); a tree
# that ends after it is not in it whole. So both, as Chrome JSON, must
# hold the same scopes (thread, name, begin, duration) in the trees that
# began in the window's second frame or later and ended before its last
# frame began.
for c in remote file; do
    "$conv" "$tmp/$c.cap" "$tmp/$c.json" 2>"$tmp/conv.err" ||
        fail "capture_convert of the $c capture: $(cat "$tmp/conv.err")"
done
same=$(python3 - "$tmp/file.json" "$tmp/remote.json" <<'PY'
import json, sys

def load(path):
    ev = json.load(open(path))["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e.get("pid") == 1}
    frames = sorted(e["ts"] for e in ev
                    if e.get("cat") == "libcapture.frame")
    by_thread = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("pid") == 1 and \
                e.get("cat") != "libcapture.frame":
            by_thread.setdefault(names[e["tid"]], []).append(
                (e["ts"], e["dur"], e["name"]))
    trees = []  # (root begin, root end, [scopes])
    for thread, scopes in by_thread.items():
        scopes.sort(key=lambda s: (s[0], -s[1]))
        for ts, dur, name in scopes:
            if not trees or trees[-1][3] != thread or ts >= trees[-1][1]:
                trees.append([ts, ts + dur, [], thread])
            trees[-1][2].append((thread, name, ts, dur))
    return frames, trees

file_frames, file_trees = load(sys.argv[1])
win_frames, win_trees = load(sys.argv[2])
lo, hi = win_frames[1], win_frames[-1]
def kept(trees):
    return sorted(s for t in trees if t[0] >= lo and t[1] <= hi for s in t[2])
a, b = kept(file_trees), kept(win_trees)
if a != b:
    only_f = sorted(set(a) - set(b))[:3]
    only_w = sorted(set(b) - set(a))[:3]
    print("differ: %d scopes in the file, %d in the window; file only %s; "
          "window only %s" % (len(a), len(b), only_f, only_w))
    sys.exit(1)
print(len(a))
PY
) || fail "remote: scopes differ from the file's: $same"
[ "$same" -ge 1000 ] || fail "remote: only $same scopes compared"
echo "ok   remote: $same scopes of the window's trees equal to the file's"
names() { cut -d, -f5,6 | grep -v '^track' | sort -u; }
"$rc_tool" --frames --csv "$tmp/file.cap" 2>/dev/null | names >"$tmp/fn"
"$rc_tool" --frames --csv "$tmp/remote.cap" 2>/dev/null | names >"$tmp/rn"
missing=$(comm -23 "$tmp/fn" "$tmp/rn")
[ -z "$missing" ] || fail "remote: scope names missing: $missing"
echo "ok   remote: all $(wc -l <"$tmp/fn") scope names of the file"
