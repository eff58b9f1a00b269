#!/usr/bin/env bash
# A 3.1 file lists its frames in the footer; read_capture takes them from
# there. When a block is damaged, the list still holds that block's frames,
# and the reports must not show them: read_capture and capture_diff read
# the frames again from the readable blocks. So the 3.1 fixture and its 3.0
# twin (the same blocks, no list), each with the same block damaged the
# same way, give the same reports, line for line (the file's name and
# version aside), and fewer frames than undamaged.
#   frame_list_damage.sh READ_CAPTURE CAPTURE_DIFF
# Run from the repository root.
set -u
read=$1 diff=$2 fail=0
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in 3.0 3.1; do
  # the second block's payload: the same byte of the same chunk in both
  python3 - "fixtures/scope-residuals-$v.cap" "$tmp/damaged-$v.cap" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
at = [i for i in range(len(d) - 4) if d[i:i + 4] == b'CHNK']
d[at[2] + 24 + 10] ^= 0x5a
open(sys.argv[2], 'wb').write(d)
PY
done
norm() { sed "s|$tmp/damaged-3\.[01]\.cap|X|g; s|(format 3\.[01])|(format 3.x)|"; }
# same WHAT CMD...: CMD's output (stdout and stderr, normalised) with the
# damaged 3.0 file, then with the 3.1 file, where CMD says FILE
same() {
  what=$1
  shift
  a=$("${@//FILE/$tmp/damaged-3.0.cap}" 2>&1 | norm)
  b=$("${@//FILE/$tmp/damaged-3.1.cap}" 2>&1 | norm)
  if [ "$a" != "$b" ]; then
    echo "FAIL $what: the damaged 3.1 file reads unlike 3.0's"
    diff <(printf "%s\n" "$a") <(printf "%s\n" "$b") | head -10
    fail=1
  else
    echo "ok   $what"
  fi
}
same "read_capture" "$read" FILE
same "read_capture --frames --csv" "$read" --frames --csv FILE
same "read_capture --over-time" "$read" --over-time FILE
frames() { "$read" "$1" 2>/dev/null | awk '$1 == "frames" { print $2 }'; }
whole=$(frames fixtures/scope-residuals-3.1.cap)
cut=$(frames "$tmp/damaged-3.1.cap")
if [ "$whole" != 60 ] || [ "$cut" -ge 60 ] || [ "$cut" -le 0 ]; then
  echo "FAIL frames: $whole undamaged (60 expected), $cut damaged (fewer)"
  fail=1
else
  echo "ok   frames: 60 undamaged, $cut with a block damaged"
fi
"$read" "$tmp/damaged-3.1.cap" 2>&1 >/dev/null | grep -q 'damaged chunk' ||
  { echo "FAIL: no warning of the damaged block"; fail=1; }
same "capture_diff" "$diff" FILE FILE
exit $fail
