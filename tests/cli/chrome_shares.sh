#!/usr/bin/env bash
# Real multi-thread Chrome traces imported with --frame-scope: the ranking's
# CPU shares sum to 100 % (never more: they divide all the recorded CPU
# time), no row exceeds 100 %, and the time outside frames is warned about.
#   chrome_shares.sh CAPTURE_CONVERT READ_CAPTURE CORPUS_DIR
set -u
conv=$(realpath "$1") read=$(realpath "$2") corpus=$3
dir="$corpus/chrome-trace"
if [ ! -d "$dir" ]; then
  echo "skipped: $dir is absent (a clone without ../shared)"
  exit 77
fi
export NO_COLOR=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
# trace | frame scope (the most frequent top-level scope of a busy thread)
while IFS='|' read -r trace scope; do
  out="$work/t.cap"
  if ! "$conv" --frame-scope "$scope" "$dir/$trace" "$out" 2>/dev/null; then
    echo "FAIL $trace: import failed"; fail=$((fail + 1)); continue
  fi
  "$read" --csv "$out" >"$work/r.csv" 2>"$work/r.err"
  verdict=$(awk -F, 'NR > 1 && $1 == "cpu" { s += $8; if ($8 > m) m = $8 }
                     END { if (s < 99.5 || s > 100.5 || m > 100) print "bad", s, m; else print "ok", s }' "$work/r.csv")
  if [ "${verdict%% *}" != ok ]; then
    echo "FAIL $trace: CPU shares $verdict"; fail=$((fail + 1))
  elif ! grep -q "ran outside every frame" "$work/r.err"; then
    echo "FAIL $trace: no warning about the time outside frames"; fail=$((fail + 1))
  else
    echo "ok   $trace (shares sum to ${verdict#ok }%)"
  fi
done <<'LIST'
catapult/multiple_input_latency.json|GLRenderer::SwapBuffers
catapult/tcmalloc_trace.json|CallOnMainThread callback
catapult/big_trace.json|GpuScheduler:ProcessCommands
speedscope/chrome116-trace.json|RunTask
LIST
[ $fail = 0 ]
