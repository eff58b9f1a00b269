#!/bin/sh
# Draw the pictures of the bundled capture fixtures/demo.cap and take a
# screenshot of each in headless Chromium, for docs/pictures/:
#
#   scripts/pictures.sh [OUTDIR]     (default: docs/pictures)
#
# Needs the tools built (scripts/dev.sh build) and chromium installed
# (scripts/dev.sh test installs it). Each picture is written as SVG and
# as a PNG of exactly its size.
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/pictures}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rc=build/tools/read_capture
cv=build/tools/convert/capture_convert
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "pictures.sh: no chromium installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

$rc --tree --svg "$out/demo-flame.svg" fixtures/demo.cap >/dev/null
$rc --svg "$out/demo-frames.svg" fixtures/demo.cap >/dev/null
$rc --svg "$out/h200-frames.svg" fixtures/gpu/h200_vk_passes.cap >/dev/null
$cv fixtures/gpu/h200_vk_passes.cap "$out/h200-flame.svg"
$rc --split --svg "$out/demo-split.svg" fixtures/demo.cap >/dev/null
$rc --over-time --svg "$out/throttling-over-time.svg" fixtures/throttling.cap >/dev/null
build/tools/capture_diff --svg "$out/ab-diff.svg" fixtures/ab-base.cap \
  fixtures/ab-regressed.cap >/dev/null || [ $? = 1 ] # 1: a regression, expected
# a live run (not byte-exact): game_sim's threads, its waits (grey in the
# flame graph, dashed over time) and a 30 % ramp of the work
sim=build/examples/game_sim/game_sim
if [ -x "$sim" ]; then
  "$sim" "$tmp/game_sim.cap" --frames 200 --seed 5 --ramp 30 >/dev/null
  here=$(pwd)
  # from the capture's folder, so that the pictures' titles are its name
  (cd "$tmp" &&
    "$here/$rc" --tree --svg "$out/game-sim-flame.svg" game_sim.cap &&
    "$here/$rc" --over-time --bins 8 --svg "$out/game-sim-over-time.svg" \
      game_sim.cap) >/dev/null
fi

for svg in "$out"/*.svg; do
  size=$(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1,\2/p' "$svg" | head -1)
  timeout -k 5 60 "$browser" --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --no-first-run \
    --user-data-dir="$tmp/profile" --hide-scrollbars --window-size="$size" \
    --screenshot="${svg%.svg}.png" "file://$svg" >/dev/null 2>&1
  echo "$svg -> ${svg%.svg}.png ($size)"
done
