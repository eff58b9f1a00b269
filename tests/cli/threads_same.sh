#!/usr/bin/env bash
# Every report of read_capture (text, CSV, SVG: the ranking, --tree,
# --split, --over-time, --frames) and capture_diff's on every fixture is
# byte for byte the same read on 1 thread and on 8, with the capture cut
# at every block (CAP_READ_CHUNK_BYTES=1: as many chunks as the file has
# blocks, so that frames are cut by chunk edges and merged), and the same
# as with the default chunks. issue 41: the load merges chunks in chunk
# order, whatever the number of threads.
#   threads_same.sh READ_CAPTURE CAPTURE_DIFF FIXTURES_DIR
set -u
rc_tool=$1 diff_tool=$2 fx=$3
tmpd=$(mktemp -d -p "${TMPDIR:-/tmp}")
trap 'rm -rf "$tmpd"' EXIT
export NO_COLOR=1
fail=0 n=0
# run NAME THREADS CHUNK_BYTES TOOL ARGS...: stdout, stderr, status and
# any SVG into $tmpd/NAME.THREADS.CHUNK
run() {
  local name=$1 t=$2 cb=$3 tool=$4
  shift 4
  local o=$tmpd/$name.$t.$cb
  if [ "$cb" = default ]; then
    CAP_READ_THREADS=$t "$tool" "$@" >"$o.out" 2>"$o.err"
  else
    CAP_READ_THREADS=$t CAP_READ_CHUNK_BYTES=$cb "$tool" "$@" >"$o.out" 2>"$o.err"
  fi
  echo "status $?" >>"$o.err"
  if [ -f "$tmpd/pic.svg" ]; then mv "$tmpd/pic.svg" "$o.svg"; fi
}
same() { # NAME: the three runs agree
  local name=$1 base=$tmpd/$1.1.1
  for other in "$tmpd/$name.8.1" "$tmpd/$name.8.default"; do
    for ext in out err svg; do
      if [ -f "$base.$ext" ] || [ -f "$other.$ext" ]; then
        if ! cmp -s "$base.$ext" "$other.$ext"; then
          echo "FAIL $name: ${other##*/}.$ext differs from 1 thread"
          diff "$base.$ext" "$other.$ext" | head -5
          fail=$((fail + 1))
        fi
      fi
    done
  done
  n=$((n + 1))
  rm -f "$tmpd/$name".*
}
reports=("" "--csv" "--tree" "--tree --csv" "--split" "--split --csv"
         "--over-time" "--over-time --csv" "--frames --csv")
for f in "$fx"/*.cap; do
  b=$(basename "$f" .cap)
  for i in "${!reports[@]}"; do
    # shellcheck disable=SC2206
    args=(${reports[$i]})
    svg=()
    case "${reports[$i]}" in *--csv*) ;; *) svg=(--svg "$tmpd/pic.svg") ;; esac
    for t in 1 8; do run "$b.$i" "$t" 1 "$rc_tool" "${args[@]}" "${svg[@]}" "$f"; done
    run "$b.$i" 8 default "$rc_tool" "${args[@]}" "${svg[@]}" "$f"
    same "$b.$i"
  done
done
# capture_diff: pairs of fixtures, and a file against itself
pairs=("ab-base ab-regressed" "game-sim-base game-sim-slow" "ramp ramp"
       "mix-base mix-heavier" "throttling warmup" "demo demo")
for p in "${pairs[@]}"; do
  set -- $p
  for t in 1 8; do run "diff.$1.$2" "$t" 1 "$diff_tool" "$fx/$1.cap" "$fx/$2.cap"; done
  run "diff.$1.$2" 8 default "$diff_tool" "$fx/$1.cap" "$fx/$2.cap"
  same "diff.$1.$2"
done
echo "$((n - fail)) of $n reports the same on 1 and 8 threads"
[ $fail = 0 ]
