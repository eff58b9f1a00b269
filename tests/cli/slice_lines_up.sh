#!/usr/bin/env bash
# A slice (capture_convert --frames / --seconds / --slowest) keeps its
# frames' indices and times "so that its report lines up with the full
# capture's": each kept frame's time, GPU time and every scope's self time
# in it are the full capture's, to the ns. game_sim's workers wait across
# frames, so a kept frame also holds waits that began before the slice.
#   slice_lines_up.sh CAPTURE_CONVERT READ_CAPTURE
# Run from the repository root.
set -u
conv=$1 read=$2 fail=0
export NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cap=fixtures/game-sim-base.cap
# --frames --csv rows without start_s (a slice's seconds count from its
# own first frame)
rows() { "$read" --frames --csv "$1" 2>/dev/null | grep -v '^frame' |
         cut -d, -f1,3-7 | sort; }
rows "$cap" >"$tmp/full"
for slice in "--frames 40:50" "--seconds 0.5:0.7" "--slowest 3 --context 1"; do
  # shellcheck disable=SC2086 # the slice's words
  if ! "$conv" $slice "$cap" "$tmp/s.cap" 2>"$tmp/err"; then
    echo "FAIL $slice: $(cat "$tmp/err")"; fail=1; continue
  fi
  rows "$tmp/s.cap" >"$tmp/slice"
  cut -d, -f1 "$tmp/slice" | sort -u >"$tmp/kept"
  awk -F, 'NR == FNR { k[$1] = 1; next } k[$1]' "$tmp/kept" "$tmp/full" \
    >"$tmp/want"
  n=$(wc -l <"$tmp/kept")
  waits=$(grep -c ',worker_wait,' "$tmp/want")
  if [ "$n" -lt 3 ] || [ "$waits" -lt "$n" ]; then
    echo "FAIL $slice: $n frames, $waits worker_wait rows: not the case meant"
    fail=1
  elif cmp -s "$tmp/slice" "$tmp/want"; then
    echo "ok   $slice: $n frames, $(wc -l <"$tmp/want") rows as in the full capture"
  else
    echo "FAIL $slice: rows differ from the full capture's:"
    diff "$tmp/want" "$tmp/slice" | head -6
    fail=1
  fi
done
exit $fail
