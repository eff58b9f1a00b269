#!/usr/bin/env bash
# Bytes a recorded event of examples/game_sim at its defaults (4 workers,
# its GPU spans and counters, the producer's 100 ms flush and its default
# format, 4.0), and the same program asked for 3.1 (--format-major 3): each
# a run of its own (game_sim's pace follows the machine), its events
# counted as the Chrome trace events capture_convert makes of them
# (scopes, GPU spans and frames "X", counter samples "C"). Issue 43's
# target for the default: game_sim_bytes_per_event <= 2.0. Where the
# default file's bytes go follows (bench/bench_sections, by section kind).
# Usage: bench/game_sim_size.sh [BUILD_DIR] [SECONDS]  (build, 10)
#   (meson test -C build --benchmark game_sim_size runs it for 10 s)
set -eu
build=${1:-build} secs=${2:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in default 3; do
  args=()
  tag=
  if [ "$m" != default ]; then
    args=(--format-major "$m")
    tag=_format$m
  fi
  "$build/examples/game_sim/game_sim" "$tmp/g$m.cap" --seconds "$secs" \
    "${args[@]}" >/dev/null
  "$build/tools/convert/capture_convert" "$tmp/g$m.cap" "$tmp/g$m.json"
  bytes=$(stat -c %s "$tmp/g$m.cap")
  events=$(grep -o '"ph":"[XC]"' "$tmp/g$m.json" | wc -l)
  echo "game_sim_events$tag=$events"
  echo "game_sim_bytes$tag=$bytes"
  awk -v b="$bytes" -v e="$events" -v t="$tag" \
    'BEGIN { printf "game_sim_bytes_per_event%s=%.3f\n", t, b / e }'
  if [ "$m" = default ]; then
    echo "game_sim_bytes_per_event_target=2.0"
    # where they go, by section kind (sections_*_per_event)
    if [ -x "$build/bench/bench_sections" ]; then
      "$build/bench/bench_sections" "$tmp/g$m.cap" "$events" |
        sed -n 's/^\(sections_.*_per_event=\)/game_sim_\1/p'
    fi
  fi
done
