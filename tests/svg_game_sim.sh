#!/bin/sh
# The pictures of a live run: game_sim records two short captures (the
# second with one scope made 60 % slower), the tools draw every picture
# of them, headless Chromium checks each (tests/browser_check.sh), and
# the differential flame graph must colour the slowed scope as regressed
# and leave the untouched ones grey.
#   svg_game_sim.sh GAME_SIM READ_CAPTURE CAPTURE_DIFF CAPTURE_CONVERT CHECK_JS
# Exit 0 pass, 1 fail, 77 skipped (no chromium: browser_check.sh says so).
set -u
sim=$1 rc=$2 diff=$3 cv=$4 js=$5
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
if [ ! -x "$sim" ]; then
  echo "SKIP: $sim is not built"
  exit 77
fi
"$sim" "$tmp/base.cap" --frames 150 --seed 1 --scale 0.2 >/dev/null ||
  fail "game_sim (base) failed"
"$sim" "$tmp/slow.cap" --frames 150 --seed 2 --scale 0.2 \
  --slow physics_broadphase:60 >/dev/null || fail "game_sim (slow) failed"
"$rc" --tree --svg "$tmp/flame.svg" "$tmp/base.cap" >/dev/null 2>&1 || fail "--tree --svg"
"$rc" --svg "$tmp/frames.svg" "$tmp/base.cap" >/dev/null 2>&1 || fail "--svg"
"$rc" --split --svg "$tmp/split.svg" "$tmp/slow.cap" >/dev/null 2>&1 || fail "--split --svg"
"$rc" --over-time --bins 5 --svg "$tmp/over-time.svg" "$tmp/slow.cap" >/dev/null 2>&1 ||
  fail "--over-time --svg"
# the over-time picture draws all CPU work, with the text report's growth
g=$("$rc" --over-time --bins 5 "$tmp/slow.cap" 2>/dev/null |
    sed -n 's/^  (all CPU work) .* \([^ ]*\)$/\1/p')
[ -n "$g" ] || fail "--over-time: no (all CPU work) row"
grep -q "<g id=\"work\"><title>all CPU work .*growth $g</title>" \
  "$tmp/over-time.svg" && grep -q ">all CPU work $g</text>" "$tmp/over-time.svg" ||
  fail "--over-time --svg: no all CPU work line, or not growing $g as the text says"
"$cv" "$tmp/slow.cap" "$tmp/convert.svg" 2>/dev/null || fail "capture_convert to svg"
"$diff" --by-path --svg "$tmp/diff.svg" "$tmp/base.cap" "$tmp/slow.cap" >"$tmp/diff.txt" 2>&1
[ $? = 1 ] || { cat "$tmp/diff.txt"; fail "capture_diff did not find the regression"; }
# the slowed scope's box says regressed, and is painted (not the grey)
python3 - "$tmp/diff.svg" <<'PY' || exit 1
import re, sys
svg = open(sys.argv[1], encoding="utf-8").read()
boxes = re.findall(r'<g class="fg"><title>([^<]*)</title><rect [^>]*fill="(#[0-9A-F]{6})"', svg)
slow = [(t, f) for t, f in boxes if t.split("\n")[0] == "physics_broadphase"]
if not slow:
    sys.exit("FAIL: no physics_broadphase box in the differential flame graph")
for t, f in slow:
    if "\nregressed:" not in t or f == "#DDDDDD":
        sys.exit("FAIL: physics_broadphase not painted as regressed: %s %s" % (f, t))
painted = [t.split("\n")[0] for t, f in boxes
           if f != "#DDDDDD" and "regressed:" in t]
print("regressed and painted:", ", ".join(sorted(set(painted))))
grey = [t for t, f in boxes if f == "#DDDDDD"]
if not grey:
    sys.exit("FAIL: every box painted; only significant rows should be")
PY
sh "$here/browser_check.sh" "$js" "$tmp"
