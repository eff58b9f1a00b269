#!/usr/bin/env bash
# Bytes a recorded event of examples/game_sim at its defaults (4 workers,
# its GPU spans and counters, the producer's 100 ms flush), written as
# 3.1 (the default) and as 4.0 (groups of blocks): each a run of its own
# (game_sim's pace follows the machine), its events counted as the
# Chrome trace events capture_convert makes of them (scopes, GPU spans and
# frames "X", counter samples "C").
# Usage: bench/game_sim_size.sh [BUILD_DIR] [SECONDS]  (build, 10)
set -eu
build=${1:-build} secs=${2:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in 3 4; do
  "$build/examples/game_sim/game_sim" "$tmp/g$m.cap" --seconds "$secs" \
    --format-major "$m" >/dev/null
  "$build/tools/convert/capture_convert" "$tmp/g$m.cap" "$tmp/g$m.json"
  bytes=$(stat -c %s "$tmp/g$m.cap")
  events=$(grep -o '"ph":"[XC]"' "$tmp/g$m.json" | wc -l)
  echo "game_sim_events_format$m=$events"
  echo "game_sim_bytes_format$m=$bytes"
  awk -v b="$bytes" -v e="$events" -v m="$m" \
    'BEGIN { printf "game_sim_bytes_per_event_format%s=%.3f\n", m, b / e }'
done
